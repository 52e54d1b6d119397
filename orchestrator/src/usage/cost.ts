import type { Usage } from '../providers/types';
import type { ModelPrice } from './model-price';

/**
 * One model call's cost in US dollars: uncached input at the input price, cache reads at the
 * cached price, cache writes at the cache-write price (each the input price when not given),
 * output at the output price. Rounded to a millionth of a cent so sums stay readable.
 */
export function costOf(usage: Usage, price: ModelPrice): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const written = Math.min(usage.cacheWriteInputTokens ?? 0, usage.inputTokens - cached);
  const plain = usage.inputTokens - cached - written;
  const micro =
    plain * price.input +
    cached * (price.cachedInput ?? price.input) +
    written * (price.cacheWrite ?? price.input) +
    usage.outputTokens * price.output;
  return roundUsd(micro / 1_000_000);
}

/** Dollars to 8 decimal places: float sums of many small costs would otherwise print as 0.30000000000000004. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}
