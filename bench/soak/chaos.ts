import type Docker from 'dockerode';
import type { SoakWorker } from './cli';
import { sandboxesOf } from './engines';

/**
 * The soak's chaos: at random moments, SIGKILL a worker (a new one takes its place on the same
 * engine), `docker kill` a running sandbox of the soak's runs on either engine, SIGKILL one NATS
 * node and start it again. Bounded in count (per kind) and time; every action is recorded.
 */
export interface ChaosBudget {
  workerKills: number;
  sandboxKills: number;
  natsKills: number;
  /** The loop stops after this long, whatever is left of the budget. */
  maxMs: number;
  /** Pause between two actions: uniform in [min, max]. */
  gapMs: [number, number];
  /** How long a killed NATS node stays down. */
  natsDownMs: number;
}

export interface ChaosAction {
  at: string;
  kind: 'worker-kill' | 'worker-start' | 'sandbox-kill' | 'nats-kill' | 'nats-restart';
  target: string;
}

export interface ChaosTargets {
  workers: () => SoakWorker[];
  /** Starts a worker on this one's engine in its place. */
  replace: (killed: SoakWorker) => SoakWorker;
  engines: Array<{ name: string; docker: Docker }>;
  runs: Set<string>;
  nats?: { size: number; kill(node: number): Promise<void>; restart(node: number): Promise<void> };
}

const pick = <T>(items: T[]): T | undefined => items[Math.floor(Math.random() * items.length)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function chaosLoop(t: ChaosTargets, b: ChaosBudget, done: () => boolean): Promise<ChaosAction[]> {
  const actions: ChaosAction[] = [];
  const record = (kind: ChaosAction['kind'], target: string) => {
    actions.push({ at: new Date().toISOString(), kind, target });
    process.stderr.write(`[soak] chaos ${kind} ${target}\n`);
  };
  const left = { worker: b.workerKills, sandbox: b.sandboxKills, nats: t.nats ? b.natsKills : 0 };
  const until = Date.now() + b.maxMs;
  const pause = async (ms: number) => {
    const end = Math.min(until, Date.now() + ms);
    while (Date.now() < end && !done()) await sleep(Math.min(500, end - Date.now()));
  };
  for (let step = 0; step < 100 && Date.now() < until && !done(); step++) {
    await pause(b.gapMs[0] + Math.random() * (b.gapMs[1] - b.gapMs[0]));
    if (done() || Date.now() >= until) break;
    const kinds = (Object.keys(left) as Array<keyof typeof left>).filter((k) => left[k] > 0);
    const kind = pick(kinds);
    if (!kind) break;
    if (kind === 'worker') {
      const victim = pick(t.workers().filter((w) => w.child.exitCode === null && w.child.signalCode === null));
      if (!victim) continue;
      victim.child.kill('SIGKILL');
      await victim.exited;
      record('worker-kill', `${victim.name} (pid ${victim.child.pid}, engine ${victim.engine.name})`);
      const next = t.replace(victim);
      record('worker-start', `${next.name} (pid ${next.child.pid}, engine ${next.engine.name})`);
      left.worker--;
    } else if (kind === 'sandbox') {
      const running = [];
      for (const e of t.engines) running.push(...(await sandboxesOf(e.docker, e.name, t.runs).catch(() => [])));
      const victim = pick(running);
      if (!victim) continue; // none running right now: try again at the next step
      const docker = t.engines.find((e) => e.name === victim.engine)!.docker;
      await docker
        .getContainer(victim.id)
        .kill()
        .catch(() => undefined);
      record('sandbox-kill', `${victim.id.slice(0, 12)} of ${victim.runId} on ${victim.engine}`);
      left.sandbox--;
    } else {
      const node = Math.floor(Math.random() * t.nats!.size);
      await t.nats!.kill(node);
      record('nats-kill', `node ${node + 1}`);
      left.nats--;
      await sleep(b.natsDownMs);
      await t.nats!.restart(node);
      record('nats-restart', `node ${node + 1}`);
    }
  }
  return actions;
}
