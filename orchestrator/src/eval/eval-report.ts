import { z } from 'zod';

/**
 * The JSON an eval writes (`gatehouse eval --json`, docs/eval.md). `format` is `gatehouse.eval`;
 * within a `version` fields are only added; a change to a field's name, type or meaning bumps it.
 * Strings from a run's log (stop reasons, errors) are as recorded: render them as untrusted.
 */
export const EVAL_FORMAT = 'gatehouse.eval';
export const EVAL_VERSION = 1;

const Count = z.number().int().nonnegative();

export const EvalTaskStatus = z.enum([
  // how the run ended, as `gatehouse report` says it
  'final',
  'partial',
  'failed',
  'cancelled',
  'paused',
  'running',
  // the run did not start (a usage error, no Docker), or eval was cancelled before it started
  'error',
  'not_run',
]);
export type EvalTaskStatus = z.infer<typeof EvalTaskStatus>;

export const EvalTaskResult = z.strictObject({
  id: z.string(),
  /** The run ended final, and its check (gatehouse's own run of it) passed. */
  passed: z.boolean(),
  /**
   * Why it did not pass: `paused` (it asked; nobody answers an eval), the run's stop reason, `error`
   * (no run started), `cancelled` (eval was cancelled first); null when it passed.
   */
  reason: z.string().nullable(),
  status: EvalTaskStatus,
  stopReason: z.string().nullable(),
  decidedBy: z.string().nullable(),
  /** The last check's result (`gatehouse report`'s `check.result`); null when no run started. */
  check: z.enum(['passed', 'failed', 'not_recorded', 'none']).nullable(),
  /** Model turns and tool calls of the run (gatehouse's own check runs included), as `gatehouse report` counts them. */
  turns: Count,
  toolCalls: Count,
  /** Tokens and cost of the run and its sub-agents; cost null when no price is known for the model. */
  inputTokens: Count,
  outputTokens: Count,
  cachedInputTokens: Count,
  costUsd: z.number().nonnegative().nullable(),
  /** From starting `gatehouse run` to its exit. */
  wallMs: Count,
  runId: z.string().nullable(),
  /** What `gatehouse run` exited with (docs/cli.md); null when it was ended by a signal or never started. */
  exitCode: z.number().int().nullable(),
  model: z.string(),
  /** For `error`: what the run printed on stderr (its end). */
  error: z.string().nullable(),
});
export type EvalTaskResult = z.infer<typeof EvalTaskResult>;

const Totals = z.strictObject({
  tasks: Count,
  passed: Count,
  failed: Count,
  /** passed / tasks, 0 to 1. */
  passRate: z.number().min(0).max(1),
  turns: Count,
  toolCalls: Count,
  inputTokens: Count,
  outputTokens: Count,
  cachedInputTokens: Count,
  /** The sum of the costs known; null when none is. `costUnknown` counts the tasks left out. */
  costUsd: z.number().nonnegative().nullable(),
  costUnknown: Count,
  wallMs: Count,
});

/** Medians over the tasks whose run started (an even count: the mean of the middle two). */
const Medians = z.strictObject({
  turns: z.number().nullable(),
  toolCalls: z.number().nullable(),
  inputTokens: z.number().nullable(),
  outputTokens: z.number().nullable(),
  costUsd: z.number().nullable(),
  wallMs: z.number().nullable(),
});

export const EvalReport = z.strictObject({
  format: z.literal(EVAL_FORMAT),
  version: z.literal(EVAL_VERSION),
  suite: z.strictObject({ file: z.string(), name: z.string().nullable() }),
  concurrency: z.number().int().positive(),
  startedAt: z.string(),
  finishedAt: z.string(),
  /** The whole eval, start to end (tasks overlap when run several at once). */
  wallMs: Count,
  tasks: z.array(EvalTaskResult),
  totals: Totals,
  medians: Medians,
});
export type EvalReport = z.infer<typeof EvalReport>;

/**
 * The fields of a task's result that a scripted model makes the same on every run of the suite:
 * a regression test compares these (wall time, run ids and errors' wording vary).
 */
export const DETERMINISTIC_TASK_FIELDS = [
  'id',
  'passed',
  'reason',
  'status',
  'stopReason',
  'decidedBy',
  'check',
  'turns',
  'toolCalls',
  'inputTokens',
  'outputTokens',
  'cachedInputTokens',
  'costUsd',
  'model',
] as const satisfies readonly (keyof EvalTaskResult)[];

/** Totals and medians of a suite's results. */
export function summarise(tasks: readonly EvalTaskResult[]): Pick<EvalReport, 'totals' | 'medians'> {
  const sum = (f: (t: EvalTaskResult) => number) => tasks.reduce((n, t) => n + f(t), 0);
  const passed = tasks.filter((t) => t.passed).length;
  const costs = tasks.flatMap((t) => (t.costUsd === null ? [] : [t.costUsd]));
  const ran = tasks.filter((t) => t.runId !== null);
  const med = (f: (t: EvalTaskResult) => number | null) => median(ran.flatMap((t) => (f(t) === null ? [] : [f(t)!])));
  return {
    totals: {
      tasks: tasks.length,
      passed,
      failed: tasks.length - passed,
      passRate: tasks.length === 0 ? 0 : passed / tasks.length,
      turns: sum((t) => t.turns),
      toolCalls: sum((t) => t.toolCalls),
      inputTokens: sum((t) => t.inputTokens),
      outputTokens: sum((t) => t.outputTokens),
      cachedInputTokens: sum((t) => t.cachedInputTokens),
      costUsd: costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0),
      costUnknown: ran.length - ran.filter((t) => t.costUsd !== null).length,
      wallMs: sum((t) => t.wallMs),
    },
    medians: {
      turns: med((t) => t.turns),
      toolCalls: med((t) => t.toolCalls),
      inputTokens: med((t) => t.inputTokens),
      outputTokens: med((t) => t.outputTokens),
      costUsd: med((t) => t.costUsd),
      wallMs: med((t) => t.wallMs),
    },
  };
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
