import { z } from 'zod';

/**
 * Permission modes, from strictest to most permissive. A mode is only the default for what no
 * rule names; deny rules hold in every mode.
 *  - read-only: only tools that cannot change anything are visible; anything else is denied.
 *  - confirm-each: every write and every command asks (unless an allow rule covers it).
 *  - confirm-novel (default): asks the first time an action of a given shape is seen in a run;
 *    once a person approved that shape, the same shape runs without asking for the rest of the run.
 *  - sandboxed-auto: inside the sandbox everything runs, except network, privilege, commands the
 *    classifier does not know or cannot follow, and what deny or ask rules name.
 */
export const Mode = z.enum(['read-only', 'confirm-each', 'confirm-novel', 'sandboxed-auto']);
export type Mode = z.infer<typeof Mode>;
export const DEFAULT_MODE: Mode = 'confirm-novel';

/** 0 = strictest. A child's mode is never later in this list than its parent's. */
export function modeRank(mode: Mode): number {
  return Mode.options.indexOf(mode);
}
