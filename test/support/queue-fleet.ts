import { expect } from 'vitest';
import { ensureImages } from '@gatehouse/orchestrator';
import { startNatsCluster, type NatsCluster } from './nats-cluster';
import {
  gatehouse,
  policyFile,
  repoWith,
  scriptFile,
  startWorkerProcess,
  type Event,
  type WorkerProcess,
} from './queue-cli';

/** A run as `gatehouse status --json` lists it. */
export interface StatusRun {
  runId: string;
  state: string;
  status?: string;
  worker?: string;
  pending?: string[];
}

export interface StatusJson {
  runs: StatusRun[];
  leases: Array<{ runId: string; worker: string }>;
  unverified: Array<{ runId: string; problem: string }>;
}

/**
 * One test file's queue: a single-node JetStream server, the `gatehouse worker` processes the test
 * starts, and the runs whose sandboxes a killed worker may have left. `stop()` ends them all
 * (stopped workers are continued first, so SIGKILL reaches them) and reaps those sandboxes.
 */
export class QueueFleet {
  readonly workers: WorkerProcess[] = [];
  readonly #reap: Array<{ runId: string; env: NodeJS.ProcessEnv }> = [];

  private constructor(
    readonly nats: NatsCluster,
    readonly store: string,
  ) {}

  static async start(): Promise<QueueFleet> {
    const images = await ensureImages({ prune: false });
    const nats = await startNatsCluster(images.nats, 1);
    return new QueueFleet(nats, nats.servers[0]!);
  }

  /** A `gatehouse worker` on this fleet's store, ended by `stop()`. */
  worker(env: NodeJS.ProcessEnv, extra: string[] = [], stateDir?: string): WorkerProcess {
    const w = startWorkerProcess(this.store, env, extra, stateDir);
    this.workers.push(w);
    return w;
  }

  /** A run whose sandbox a killed worker may leave behind: reaped by `stop()`. */
  reapAfter(runId: string, env: NodeJS.ProcessEnv): void {
    this.#reap.push({ runId, env });
  }

  /** `gatehouse submit` of a scripted run (exit 0 asserted); its run id. */
  submit(env: NodeJS.ProcessEnv, script: unknown, o: { task?: string; repo?: string; policy?: unknown } = {}): string {
    const r = gatehouse(
      [
        'submit',
        o.task ?? 'do it',
        '--repo',
        o.repo ?? repoWith({ 'README.md': '# queue\n' }),
        '--model',
        `scripted:${scriptFile(script)}`,
      ].concat(['--policy', policyFile(o.policy), '--store', this.store, '--json']),
      env,
    );
    expect(r.status, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { runId: string }).runId;
  }

  /** `gatehouse status --json` (exit 0 asserted). */
  status(env: NodeJS.ProcessEnv): StatusJson {
    const r = gatehouse(['status', '--store', this.store, '--json'], env);
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as StatusJson;
  }

  /** The run's state in `status`, or undefined when status fails meanwhile (polled while workers are stopped). */
  runState(env: NodeJS.ProcessEnv, runId: string): string | undefined {
    const r = gatehouse(['status', '--store', this.store, '--json'], env);
    if (r.status !== 0) return undefined;
    return (JSON.parse(r.stdout) as StatusJson).runs.find((x) => x.runId === runId)?.state;
  }

  async stop(): Promise<void> {
    for (const w of this.workers) {
      if (w.child.pid !== undefined && w.child.exitCode === null && w.child.signalCode === null)
        process.kill(w.child.pid, 'SIGCONT');
      w.child.kill('SIGKILL');
    }
    await Promise.all(this.workers.map((w) => w.exited));
    for (const { runId, env } of this.#reap) gatehouse(['sandbox', 'reap', '--run', runId], env);
    await this.nats.stop();
  }
}

/** Execution starts per call: each call's side effects happened at most once. */
export function executionsPerCall(events: Event[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of events)
    if (e.type === 'tool.execution.started') {
      const id = String(e.data.callId);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  return counts;
}
