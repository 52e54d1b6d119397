import type { RunUsage } from '@gatehouse/shared';

/** `12,345 tokens in (2,000 cached), 678 out, $0.0123`: a run's usage on one line (summary, show). */
export function usageLine(u: RunUsage): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  const cached = u.cachedInputTokens > 0 ? ` (${n(u.cachedInputTokens)} cached)` : '';
  return `${n(u.inputTokens)} tokens in${cached}, ${n(u.outputTokens)} out, ${costText(u.costUsd)}`;
}

/** Dollars to 4 places (a turn of a small model costs fractions of a cent); `cost unknown` without a price. */
export function costText(usd: number | null): string {
  return usd === null ? 'cost unknown (no price for the model)' : `$${usd.toFixed(4)}`;
}
