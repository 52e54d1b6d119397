import { describe, expect, it } from 'vitest';
import { costOf } from '../../src/usage/cost';
import { priceFor } from '../../src/usage/price-for';
import { BUILT_IN_PRICES } from '../../src/usage/prices';
import { NoPriceError, requirePrice } from '../../src/usage/require-price';
import { DEFAULT_BUDGETS } from '../../src/run/budgets';

describe('priceFor', () => {
  it('finds built-in prices by --model spec, dated snapshots priced as their alias', () => {
    expect(priceFor('openai:gpt-4.1')).toMatchObject({ input: 2, cachedInput: 0.5, output: 8 });
    expect(priceFor('openai:gpt-4.1-2025-04-14')).toMatchObject({ input: 2, output: 8 });
    expect(priceFor('anthropic:claude-sonnet-4-5-20250929')).toMatchObject({ input: 3, cacheWrite: 3.75 });
    expect(priceFor('anthropic:claude-3-5-haiku-latest')).toMatchObject({ input: 0.8, output: 4 });
    expect(priceFor('OpenAI:gpt-4o-mini')?.source).toMatch(/^built-in table \(\d{4}-\d{2}\)$/);
  });

  it('never mistakes one model for another that shares a prefix', () => {
    expect(priceFor('openai:gpt-4.1-mini')).toMatchObject({ input: 0.4 });
    expect(priceFor('openai:gpt-4.1-mini-2025-04-14')).toMatchObject({ input: 0.4 });
    expect(priceFor('openai:gpt-4.1-turbo')).toBeUndefined();
  });

  it('has no price for unknown and scripted models unless the config gives one', () => {
    expect(priceFor('openai:my-local-llama')).toBeUndefined();
    expect(priceFor('scripted:/tmp/s.json')).toBeUndefined();
    expect(priceFor('nonsense')).toBeUndefined();
    const overrides = { prices: { 'scripted:*': { input: 1000, output: 2000 } }, source: '/etc/gh.json' };
    expect(priceFor('scripted:/tmp/s.json', overrides)).toEqual({ input: 1000, output: 2000, source: '/etc/gh.json' });
  });

  it('the config wins over the table: an exact model first, then provider:*', () => {
    const overrides = {
      prices: {
        'openai:gpt-4.1': { input: 1, output: 4 },
        'openai:*': { input: 9, output: 9 },
      },
      source: 'cfg.json',
    };
    expect(priceFor('openai:gpt-4.1', overrides)).toEqual({ input: 1, output: 4, source: 'cfg.json' });
    expect(priceFor('openai:gpt-4o', overrides)).toEqual({ input: 9, output: 9, source: 'cfg.json' });
    expect(priceFor('anthropic:claude-haiku-4-5', overrides)?.source).toMatch(/^built-in/);
  });

  it('every built-in entry is a sane price: non-negative, cached no dearer than input', () => {
    for (const [key, p] of Object.entries(BUILT_IN_PRICES)) {
      expect(key).toMatch(/^(openai|anthropic):[a-z0-9.-]+$/);
      for (const v of [p.input, p.output, p.cachedInput ?? 0, p.cacheWrite ?? 0]) expect(v).toBeGreaterThanOrEqual(0);
      expect(p.cachedInput ?? p.input).toBeLessThanOrEqual(p.input);
    }
  });
});

describe('costOf', () => {
  const price = { input: 2, cachedInput: 0.5, output: 8, cacheWrite: 2.5 };
  it('prices uncached input, cache reads, cache writes and output each at their rate', () => {
    expect(costOf({ inputTokens: 1_000_000, outputTokens: 0 }, price)).toBe(2);
    expect(costOf({ inputTokens: 1_000_000, outputTokens: 0, cachedInputTokens: 1_000_000 }, price)).toBe(0.5);
    expect(costOf({ inputTokens: 1_000_000, outputTokens: 0, cacheWriteInputTokens: 1_000_000 }, price)).toBe(2.5);
    expect(costOf({ inputTokens: 0, outputTokens: 1_000_000 }, price)).toBe(8);
    expect(
      costOf({ inputTokens: 4000, outputTokens: 500, cachedInputTokens: 1000, cacheWriteInputTokens: 2000 }, price),
    ).toBeCloseTo((1000 * 2 + 1000 * 0.5 + 2000 * 2.5 + 500 * 8) / 1e6, 12);
  });

  it('without a cached or cache-write price, those tokens cost the input price', () => {
    expect(costOf({ inputTokens: 100, outputTokens: 0, cachedInputTokens: 100 }, { input: 3, output: 1 })).toBe(0.0003);
  });

  it('never counts more cached tokens than input tokens (a confused server cannot make cost negative)', () => {
    expect(costOf({ inputTokens: 10, outputTokens: 0, cachedInputTokens: 50 }, price)).toBe(0.000005);
  });
});

describe('requirePrice', () => {
  it('refuses a cost budget without a price, saying how to give one in the config', () => {
    const budgets = { ...DEFAULT_BUDGETS, maxCostUsd: 1 };
    expect(() => requirePrice('openai:my-llama', budgets, undefined)).toThrow(NoPriceError);
    expect(() => requirePrice('openai:my-llama', budgets, undefined)).toThrow(
      /--max-cost .*needs the price of openai:my-llama.*--config FILE.*"prices": \{"openai:my-llama"/s,
    );
  });
  it('accepts a priced model, and anything without a cost budget', () => {
    expect(() => requirePrice('openai:my-llama', DEFAULT_BUDGETS, undefined)).not.toThrow();
    const budgets = { ...DEFAULT_BUDGETS, maxCostUsd: 1 };
    expect(() => requirePrice('openai:gpt-4.1', budgets, priceFor('openai:gpt-4.1'))).not.toThrow();
  });
});
