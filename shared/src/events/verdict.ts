import { z } from 'zod';

/**
 * Events of how a run's answer is judged (issue 13): what was sent back to the model instead of
 * ending the run, and the check command that decides success. Also the run's summed model usage.
 */
const CallId = z.string().min(1).max(128);

/** Model usage summed over a run (run.completed, show, the report). */
export const RunUsage = z.strictObject({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative(),
  costUsd: z.number().nonnegative().nullable(),
});
export type RunUsage = z.infer<typeof RunUsage>;

export const VerdictEventData = {
  /**
   * Something sent back to the model instead of ending the run: a final answer whose claims the
   * evidence does not support (`contract`), a reply cut off at the output limit (`truncated`), a
   * failed check (`check`).
   */
  'run.feedback': z.strictObject({
    turn: z.number().int().positive(),
    reason: z.string(),
    kind: z.enum(['contract', 'truncated', 'filtered', 'check']).optional(),
    /** The answer's claims as judged, for `contract` feedback. */
    claims: z
      .array(
        z.strictObject({
          claim: z.string().max(2000),
          cites: z.array(z.string()),
          supported: z.boolean(),
          reason: z.string().optional(),
        }),
      )
      .max(200)
      .optional(),
  }),
  /**
   * The check command (`--check` / config `check`) and its result: run by the model, or by
   * gatehouse itself before finishing when the model did not run it after the last change.
   */
  'run.check': z.strictObject({
    command: z.string(),
    ranBy: z.enum(['model', 'gatehouse']),
    /** The tool call that ran it (gatehouse's own runs through the same pipeline, ids `check_N`). */
    callId: CallId,
    observationId: z
      .string()
      .regex(/^obs-\d+$/)
      .optional(),
    /** null when the command did not run to an exit (denied, timed out, sandbox failure). */
    exitCode: z.number().int().nullable(),
    passed: z.boolean(),
    reason: z.string().max(2000).optional(),
  }),
} as const;
