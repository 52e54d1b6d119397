import { z } from 'zod';

export const ValidationError = z.strictObject({
  /** Schema path of the bad field ('' for the whole input), or the workspace path concerned. */
  path: z.string(),
  code: z.string(),
  message: z.string(),
});
export type ValidationError = z.infer<typeof ValidationError>;

/** One workspace path of a call and where it resolved (`real` absent when it could not be). */
export const ResolvedPathRecord = z.strictObject({
  path: z.string(),
  real: z.string().optional(),
  exists: z.boolean(),
  outside: z.boolean(),
  dangling: z.boolean().optional(),
  error: z.string().optional(),
});
