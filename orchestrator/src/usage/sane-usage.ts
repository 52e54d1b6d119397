import type { Usage } from '../providers/types';

/** More tokens than any one model call uses: an infinite or absurd figure counts as this many. */
export const MAX_TURN_TOKENS = 1e12;

/**
 * A provider's usage as figures budgets can add up: whole, non-negative, finite. The figures come
 * from the server `--model` names (a compatible server, or a proxy in between), so they are data,
 * not facts: a negative one would pay back earlier turns, NaN would make every budget comparison
 * false, and either made the log refuse the turn's model.output and crash the run (red team,
 * issue 13). Unknown (NaN, not a number, negative) counts as 0, infinite or absurd as
 * MAX_TURN_TOKENS (the budget stops the run), and cached or cache-write tokens at most the input.
 */
export function saneUsage(u: Usage): Usage {
  const inputTokens = count(u.inputTokens);
  const cached = u.cachedInputTokens === undefined ? undefined : Math.min(count(u.cachedInputTokens), inputTokens);
  const written =
    u.cacheWriteInputTokens === undefined ? undefined : Math.min(count(u.cacheWriteInputTokens), inputTokens);
  return {
    inputTokens,
    outputTokens: count(u.outputTokens),
    ...(cached !== undefined ? { cachedInputTokens: cached } : {}),
    ...(written !== undefined ? { cacheWriteInputTokens: written } : {}),
  };
}

function count(n: unknown): number {
  if (typeof n !== 'number' || Number.isNaN(n) || n <= 0) return 0;
  return Math.min(Math.round(n), MAX_TURN_TOKENS);
}
