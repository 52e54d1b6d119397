import { Semaphore } from '../agents/semaphore';
import { EVAL_FORMAT, EVAL_VERSION, EvalReport, summarise, type EvalTaskResult } from './eval-report';
import type { TaskRunner } from './spawn-run';
import type { Suite } from './suite-schema';
import { notRun, taskResult } from './task-result';

export interface RunSuiteOptions {
  /** How each task runs: `gatehouse run` (spawn-run.ts's cliTaskRunner). */
  runTask: TaskRunner;
  /** Tasks running at once (at least 1). */
  concurrency: number;
  /** `--state-dir` for every run (default: each repository's own place). */
  stateDir?: string;
  /** Cancels: running tasks are sent SIGINT (they end cancelled), tasks not started are reported not_run. */
  signal?: AbortSignal;
  /** Each task's result as it ends (in the order they end). */
  onResult?: (r: EvalTaskResult, done: number, of: number) => void;
}

/**
 * Runs every task of a suite, `concurrency` at a time, each a real `gatehouse run` on its own
 * copy of the repository, and reports them in the suite's order with totals and medians. A task
 * that fails, pauses or cannot start is a result, not an error: the others still run.
 */
export async function runSuite(suite: Suite, o: RunSuiteOptions): Promise<EvalReport> {
  const started = new Date();
  const t0 = performance.now();
  const gate = new Semaphore(o.concurrency);
  let done = 0;
  const results = await Promise.all(
    suite.tasks.map(async (t): Promise<EvalTaskResult> => {
      const release = await gate.acquire();
      try {
        let r: EvalTaskResult;
        if (o.signal?.aborted) r = notRun(t);
        else {
          const run = await o
            .runTask(t, {
              ...(o.stateDir !== undefined ? { stateDir: o.stateDir } : {}),
              ...(o.signal ? { signal: o.signal } : {}),
            })
            // The process could not even be started: that task's error, not the suite's.
            .catch((e: unknown) => ({ runId: null, exitCode: null, signal: null, stderrTail: String(e), wallMs: 0 }));
          // Cancelled before its run started: not run, rather than an error of the task.
          r =
            run.runId === null && o.signal?.aborted
              ? notRun(t)
              : taskResult(t, run, o.stateDir !== undefined ? { stateDir: o.stateDir } : {});
        }
        o.onResult?.(r, ++done, suite.tasks.length);
        return r;
      } finally {
        release();
      }
    }),
  );
  // Parsed: what is written is the documented format (and its fields in the documented order).
  return EvalReport.parse({
    format: EVAL_FORMAT,
    version: EVAL_VERSION,
    suite: { file: suite.file, name: suite.name },
    concurrency: Math.max(1, o.concurrency),
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    wallMs: Math.round(performance.now() - t0),
    tasks: results,
    ...summarise(results),
  });
}
