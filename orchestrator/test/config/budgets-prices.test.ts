import { describe, expect, it } from 'vitest';
import { loadProjectConfig } from '../../src/config/load';
import { priceFor } from '../../src/usage/price-for';
import { runBudgets } from '../../src/cli/run-config';
import { DEFAULT_BUDGETS } from '../../src/run/budgets';
import { repoWith, trustedFile } from './helpers';

describe('budgets.maxCostUsd', () => {
  it('the trusted config sets a cost budget in dollars, fractions allowed', () => {
    const c = loadProjectConfig({ repoDir: repoWith(), configFile: trustedFile({ budgets: { maxCostUsd: 2.5 } }) });
    expect(c.budgets).toEqual({ maxCostUsd: 2.5 });
  });

  it('a repository may lower the trusted cost budget, or set one where there is none, never raise it', () => {
    const trusted = trustedFile({ budgets: { maxCostUsd: 2 } });
    const lower = loadProjectConfig({ repoDir: repoWith({ budgets: { maxCostUsd: 0.5 } }), configFile: trusted });
    expect(lower.budgets.maxCostUsd).toBe(0.5);
    expect(lower.ignored).toEqual([]);
    const higher = loadProjectConfig({ repoDir: repoWith({ budgets: { maxCostUsd: 20 } }), configFile: trusted });
    expect(higher.budgets.maxCostUsd).toBe(2);
    expect(higher.ignored).toEqual(['budgets.maxCostUsd 20 (above 2)']);
    const none = loadProjectConfig({ repoDir: repoWith({ budgets: { maxCostUsd: 1 } }) });
    expect(none.budgets.maxCostUsd).toBe(1);
  });

  it('a repository cannot raise the token or wall budgets above the defaults either', () => {
    const c = loadProjectConfig({
      repoDir: repoWith({ budgets: { maxTokens: DEFAULT_BUDGETS.maxTokens * 2, wallClockSeconds: 60 } }),
    });
    expect(c.budgets).toEqual({ wallClockMs: 60_000 });
    expect(c.ignored).toEqual([
      `budgets.maxTokens ${DEFAULT_BUDGETS.maxTokens * 2} (above ${DEFAULT_BUDGETS.maxTokens})`,
    ]);
  });
});

describe('prices', () => {
  const PRICES = {
    'scripted:*': { input: 1000, output: 2000 },
    'openai:gpt-4.1': { input: 1, cachedInput: 0.2, output: 3 },
  };

  it('the trusted config prices models, recorded with the file they came from', () => {
    const file = trustedFile({ prices: PRICES });
    const c = loadProjectConfig({ repoDir: repoWith(), configFile: file });
    expect(c.prices).toEqual({ prices: PRICES, source: file });
    expect(priceFor('openai:gpt-4.1', c.prices)).toEqual({ input: 1, cachedInput: 0.2, output: 3, source: file });
  });

  it("a repository's prices are ignored and listed: a price of 0 would dodge the cost budget", () => {
    const repo = repoWith({
      prices: { 'openai:gpt-4.1': { input: 0, output: 0 }, 'scripted:*': { input: 0, output: 0 } },
    });
    const alone = loadProjectConfig({ repoDir: repo });
    expect(alone.prices).toBeUndefined();
    expect(alone.ignored).toEqual([
      'prices.openai:gpt-4.1 (only the trusted config sets prices)',
      'prices.scripted:* (only the trusted config sets prices)',
    ]);
    expect(priceFor('openai:gpt-4.1', alone.prices)).toMatchObject({ input: 2, output: 8 });
    const file = trustedFile({ prices: PRICES });
    const narrowed = loadProjectConfig({ repoDir: repo, configFile: file });
    expect(narrowed.prices).toEqual({ prices: PRICES, source: file });
    expect(narrowed.ignored).toHaveLength(2);
  });
});

describe('budget flags over the config', () => {
  const config = loadProjectConfig({
    repoDir: repoWith(),
    configFile: trustedFile({ budgets: { maxTokens: 5000, wallClockSeconds: 60, maxCostUsd: 3 } }),
  });
  const base = { repo: '.', maxTurns: 30, maxToolCalls: 100, explicit: { maxTurns: false, maxToolCalls: false } };

  it('without flags the config decides, the defaults fill in', () => {
    expect(runBudgets(base, config)).toEqual({
      ...DEFAULT_BUDGETS,
      maxTokens: 5000,
      wallClockMs: 60_000,
      maxCostUsd: 3,
    });
  });

  it('--max-tokens, --max-cost and --max-wall win over the config', () => {
    expect(runBudgets({ ...base, maxTokens: 9, maxCost: 0.25, maxWall: 90_000 }, config)).toEqual({
      ...DEFAULT_BUDGETS,
      maxTokens: 9,
      wallClockMs: 90_000,
      maxCostUsd: 0.25,
    });
  });
});
