import { gatehouse, engineEnv, startWorker, stopWorker, type Engine, type SoakWorker } from './cli';
import { chaosLoop, type ChaosAction, type ChaosBudget } from './chaos';
import { dockerOf, memoryMiB, sandboxesOf } from './engines';
import { runFigures, runsPerMinute, type RunFigures } from './figures';
import {
  evidence,
  soakScript,
  storeLog,
  submit,
  submitRetries,
  waitForRuns,
  type Installation,
  type RunState,
} from './runs';

/**
 * The soak: a throughput phase (one worker, then two on two engines, no chaos), then a chaos phase
 * (two workers on two engines while workers, sandboxes and a NATS node are killed), then figures
 * from the store and the workers' local copies. Bounded: each phase waits at most `waitMs`.
 */
export interface SoakOptions {
  inst: Installation;
  /** The engines workers drive: the first for worker 1, the second (or the first again) for worker 2. */
  engines: Engine[];
  nats?: { size: number; kill(node: number): Promise<void>; restart(node: number): Promise<void> };
  throughputRuns: number;
  chaosRuns: number;
  concurrency: number;
  /** Each worker's `--warm-pool` (0: none). */
  warmPool: number;
  sleepSeconds: number;
  /** The chaos phase's command sleep: longer, so kills land while runs are in flight. */
  chaosSleepSeconds: number;
  leaseTtl: string;
  chaos: ChaosBudget;
  /** How long a phase may wait for its runs after the last submit (the chaos phase: after the chaos too). */
  waitMs: number;
  log: (m: string) => void;
}

export interface SoakReport {
  runsSubmitted: number;
  runsCompleted: number;
  byStatus: Record<string, number>;
  doubleExecutions: number;
  lostEvents: number;
  /** Runs continued from the store's log by `resume` after their worker was killed (run.resumed events). */
  resumes: number;
  /** Lost sandboxes replaced by fresh ones, the run going on (run.resumed of actor runtime). */
  sandboxReplacements: number;
  /** Events only a killed worker's local copy held, written after its last flush and never acted on. */
  unflushedLocalEvents: number;
  runsPerMinute: { oneWorker: number | null; twoWorkers: number | null };
  chaos: { runs: number; actions: ChaosAction[]; byStatus: Record<string, number> };
  capacity: {
    peakSandboxes: Record<string, number>;
    sandboxMemoryMiB: { samples: number; p50?: number; max?: number };
  };
  problems: Array<Pick<RunFigures, 'runId' | 'lost'> & { doubleExecutions: number }>;
  notCompleted: Array<{ runId: string; state: string; reason?: string; workerLines: string[] }>;
  /** Runs that completed with another status than final (failed, ...), with the queue's reason. */
  notFinal: Array<{ runId: string; status: string; reason?: string }>;
  /** Submits that failed and were tried again (the run was not queued by them). */
  submitFailures: string[];
  durationMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const began = Date.now();
  const workers: SoakWorker[] = [];
  const states = new Map<string, RunState>();
  const all: string[] = [];
  const peak: Record<string, number> = {};
  const memory: number[] = [];
  const engines = o.engines.map((e) => ({ name: e.name, docker: dockerOf(e) }));
  let sampling = false;
  let done = false;
  let n = 0;
  const spawn = (engine: Engine): SoakWorker => {
    const w = startWorker({ ...o, store: o.inst.store, env: o.inst.env, engine, name: `w${++n}-${engine.name}` });
    workers.push(w);
    return w;
  };
  // Sandboxes at once per engine, and each one's memory (`docker stats` figures), while runs go on.
  const sampler = (async () => {
    for (let i = 0; i < 10_000; i++) {
      if (sampling) {
        const mine = new Set(all);
        for (const e of engines) {
          const running = await sandboxesOf(e.docker, e.name, mine).catch(() => []);
          peak[e.name] = Math.max(peak[e.name] ?? 0, running.length);
          for (const s of running.slice(0, 4)) {
            const mib = await memoryMiB(e.docker, s.id);
            if (mib !== undefined) memory.push(mib);
          }
        }
      }
      if (done) break;
      await sleep(3000);
    }
  })();

  const phase = async (name: string, count: number, engineList: Engine[], chaos: boolean) => {
    if (count <= 0) return { runs: [] as string[], rpm: null as number | null, actions: [] as ChaosAction[] };
    const live = engineList.map((e) => spawn(e));
    await sleep(1500); // the workers connect before the clock starts
    o.log(`${name}: ${count} runs, ${live.length} worker(s) on ${engineList.map((e) => e.name).join(' + ')}`);
    const t0 = Date.now();
    const runs: string[] = [];
    const script = soakScript(chaos ? o.chaosSleepSeconds : o.sleepSeconds);
    for (let i = 0; i < count; i++) runs.push(await submit(o.inst, script));
    all.push(...runs);
    sampling = true;
    let ended = false;
    const current = new Set(live);
    const chaosDone = chaos
      ? chaosLoop(
          {
            workers: () => [...current],
            replace: (k) => {
              current.delete(k);
              const w = spawn(k.engine);
              current.add(w);
              return w;
            },
            engines,
            runs: new Set(runs),
            ...(o.nats ? { nats: o.nats } : {}),
          },
          o.chaos,
          () => ended,
        )
      : Promise.resolve([] as ChaosAction[]);
    const deadline = Date.now() + o.waitMs + (chaos ? o.chaos.maxMs : 0);
    const seen = await waitForRuns(o.inst, runs, deadline);
    ended = true;
    const actions = await chaosDone;
    // A NATS node the chaos had just restarted may still be catching up: read the final view again.
    if (chaos) for (const [id, s] of await waitForRuns(o.inst, runs, Date.now() + 30_000)) seen.set(id, s);
    sampling = false;
    for (const [id, s] of seen) states.set(id, s);
    await Promise.all([...current].map(stopWorker));
    let last = 0;
    for (const id of runs) {
      const { events } = await storeLog(o.inst, id);
      const end = events.find((e) => e.type === 'run.completed');
      if (end) last = Math.max(last, Date.parse(end.ts));
    }
    const allDone = runs.every((id) => seen.get(id)?.state === 'completed');
    return { runs, rpm: allDone && last ? runsPerMinute(runs.length, t0, last) : null, actions };
  };

  try {
    const main = o.engines[0]!;
    const second = o.engines[1] ?? main;
    const one = await phase('throughput, one worker', o.throughputRuns, [main], false);
    const two = await phase('throughput, two workers', o.throughputRuns, [main, second], false);
    const chaos = await phase('chaos', o.chaosRuns, [main, second], true);
    done = true;
    o.log('figures: reading every run from the store and the workers’ local copies');
    const stateDirs = workers.map((w) => w.stateDir);
    const figures: RunFigures[] = [];
    for (const id of all) figures.push(runFigures(await evidence(o.inst, id, stateDirs, states.get(id))));
    const byStatus = (ids: string[]) => {
      const out: Record<string, number> = {};
      for (const id of ids) {
        const s = states.get(id);
        const key = s ? (s.state === 'completed' ? `completed:${s.status ?? '?'}` : s.state) : 'unknown';
        out[key] = (out[key] ?? 0) + 1;
      }
      return out;
    };
    const sorted = [...memory].sort((a, b) => a - b);
    return {
      runsSubmitted: all.length,
      runsCompleted: all.filter((id) => states.get(id)?.state === 'completed').length,
      byStatus: byStatus(all),
      doubleExecutions: figures.reduce((s, f) => s + f.doubleExecutions, 0),
      lostEvents: figures.reduce((s, f) => s + f.lostEvents, 0),
      resumes: figures.reduce((s, f) => s + f.resumes, 0),
      sandboxReplacements: figures.reduce((s, f) => s + f.sandboxReplacements, 0),
      unflushedLocalEvents: figures.reduce((s, f) => s + f.unflushedLocal, 0),
      runsPerMinute: { oneWorker: one.rpm, twoWorkers: two.rpm },
      chaos: { runs: chaos.runs.length, actions: chaos.actions, byStatus: byStatus(chaos.runs) },
      capacity: {
        peakSandboxes: peak,
        sandboxMemoryMiB: sorted.length
          ? { samples: sorted.length, p50: sorted[Math.floor(sorted.length / 2)]!, max: sorted.at(-1)! }
          : { samples: 0 },
      },
      problems: figures
        .filter((f) => f.lostEvents || f.doubleExecutions)
        .map((f) => ({ runId: f.runId, doubleExecutions: f.doubleExecutions, lost: f.lost })),
      notCompleted: all
        .filter((id) => states.get(id)?.state !== 'completed')
        .map((id) => ({
          runId: id,
          state: states.get(id)?.state ?? 'unknown',
          reason: states.get(id)?.reason ?? '',
          // Each attempt's end as its worker logged it (the queue keeps only the last reason).
          workerLines: workers.flatMap((w) =>
            w
              .stderr()
              .split('\n')
              .filter((l) => l.includes(id))
              .map((l) => `${w.name}: ${l.slice(0, 2000)}`),
          ),
        })),
      notFinal: all
        .filter((id) => states.get(id)?.state === 'completed' && states.get(id)?.status !== 'final')
        .map((id) => ({ runId: id, status: states.get(id)?.status ?? '?', reason: states.get(id)?.reason ?? '' })),
      submitFailures: [...submitRetries],
      durationMs: Date.now() - began,
    };
  } finally {
    done = true;
    sampling = false;
    await Promise.all(workers.map(stopWorker));
    await sampler;
    // Sandboxes a killed worker's runs left behind, on each engine (the second one also goes with its engine).
    for (const e of o.engines)
      for (const id of all) await gatehouse(['sandbox', 'reap', '--run', id], engineEnv(o.inst.env, e));
  }
}
