import { z } from 'zod';

/** What a run's costs were reckoned by and what it may spend, as its log records them. */

/**
 * run.started's `price`: what the run's model costs in US dollars per million tokens (input,
 * output, and the cached-input and cache-write rates when they differ), and where the figures came
 * from (the built-in table and its date, or the trusted config file). Each model.output's costUsd
 * was reckoned by it, and resume keeps it.
 */
export const RecordedPrice = z.strictObject({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cachedInput: z.number().nonnegative().optional(),
  cacheWrite: z.number().nonnegative().optional(),
  source: z.string().max(1024),
});
export type RecordedPrice = z.infer<typeof RecordedPrice>;

/**
 * run.resumed's `budgets`: the budgets the resumed run is held to (run.started's, or what budget
 * flags given to resume raised), so a later resume keeps them unless told otherwise.
 */
export const RecordedBudgets = z.strictObject({
  maxTurns: z.number().int(),
  maxToolCalls: z.number().int(),
  maxTokens: z.number().int(),
  wallClockMs: z.number(),
  maxCostUsd: z.number().nonnegative().optional(),
});
export type RecordedBudgets = z.infer<typeof RecordedBudgets>;
