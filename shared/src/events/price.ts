import { z } from 'zod';

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
