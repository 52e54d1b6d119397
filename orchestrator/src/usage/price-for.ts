import type { ModelPrice, PriceInForce } from './model-price';
import { BUILT_IN_PRICES, BUILT_IN_PRICES_DATE } from './prices';

/** Price overrides from the trusted config: keys are `provider:model` or `provider:*`. */
export interface PriceOverrides {
  prices: Readonly<Record<string, ModelPrice>>;
  /** The config file they came from, for the record. */
  source: string;
}

/**
 * The price of a `--model` spec: the trusted config's entry for exactly that model, else its
 * `provider:*` entry, else the built-in table's (a dated snapshot such as
 * `claude-sonnet-4-5-20250929` or `gpt-4.1-2025-04-14` is priced as its alias). Undefined when no
 * price is known; a scripted model has none unless the config gives one.
 */
export function priceFor(spec: string, overrides?: PriceOverrides): PriceInForce | undefined {
  const key = priceKey(spec);
  if (!key) return undefined;
  const provider = key.slice(0, key.indexOf(':'));
  const given = overrides?.prices[key] ?? overrides?.prices[`${provider}:*`];
  if (given && overrides) return { ...given, source: overrides.source };
  const builtIn = BUILT_IN_PRICES[key] ?? BUILT_IN_PRICES[undated(key)];
  return builtIn ? { ...builtIn, source: `built-in table (${BUILT_IN_PRICES_DATE})` } : undefined;
}

/** `provider:model` with the provider in lower case and spaces trimmed, or undefined for no spec. */
export function priceKey(spec: string): string | undefined {
  const m = /^\s*([a-z]+):(.*?)\s*$/i.exec(spec);
  if (!m?.[1] || !m[2]) return undefined;
  return `${m[1].toLowerCase()}:${m[2]}`;
}

/** Without a snapshot date or `-latest`: `gpt-4.1-2025-04-14` → `gpt-4.1`, `claude-3-5-haiku-20241022` → its alias. */
function undated(key: string): string {
  return key.replace(/-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, '');
}
