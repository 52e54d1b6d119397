import type { ModelPrice } from './model-price';

/**
 * When the built-in figures were taken from the providers' published price lists:
 *  - OpenAI: https://openai.com/api/pricing (standard tier; "cached input" column);
 *  - Anthropic: https://docs.anthropic.com/en/docs/about-claude/pricing ("cache hits" are
 *    `cachedInput`, "5m cache writes" are `cacheWrite`; long-context surcharges are not modelled).
 * Prices change: the trusted config's `prices` overrides any of these (docs/config.md), and a
 * model missing here has no price (its cost is unknown, and --max-cost refuses it).
 */
export const BUILT_IN_PRICES_DATE = '2025-11';

/** USD per million tokens, keyed by `provider:model` as `--model` spells it (dated snapshots match their alias). */
export const BUILT_IN_PRICES: Readonly<Record<string, ModelPrice>> = {
  // OpenAI
  'openai:gpt-5.1': { input: 1.25, cachedInput: 0.125, output: 10 },
  'openai:gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 },
  'openai:gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 },
  'openai:gpt-5-nano': { input: 0.05, cachedInput: 0.005, output: 0.4 },
  'openai:gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
  'openai:gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
  'openai:gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4 },
  'openai:gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
  'openai:gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
  'openai:o3': { input: 2, cachedInput: 0.5, output: 8 },
  'openai:o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4 },
  'openai:o3-mini': { input: 1.1, cachedInput: 0.55, output: 4.4 },
  // Anthropic
  'anthropic:claude-opus-4-5': { input: 5, cachedInput: 0.5, cacheWrite: 6.25, output: 25 },
  'anthropic:claude-opus-4-1': { input: 15, cachedInput: 1.5, cacheWrite: 18.75, output: 75 },
  'anthropic:claude-opus-4-0': { input: 15, cachedInput: 1.5, cacheWrite: 18.75, output: 75 },
  'anthropic:claude-opus-4': { input: 15, cachedInput: 1.5, cacheWrite: 18.75, output: 75 },
  'anthropic:claude-sonnet-4-5': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'anthropic:claude-sonnet-4-0': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'anthropic:claude-sonnet-4': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'anthropic:claude-3-7-sonnet': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'anthropic:claude-haiku-4-5': { input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 5 },
  'anthropic:claude-3-5-haiku': { input: 0.8, cachedInput: 0.08, cacheWrite: 1, output: 4 },
};
