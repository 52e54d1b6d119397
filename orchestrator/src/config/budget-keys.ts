import type { Budgets } from '../run/budgets';

/**
 * The config's `budgets` keys and the run budget each one sets. A config speaks in units people
 * write (seconds, dollars); the run counts in its own (milliseconds). `whole`: only whole numbers
 * make sense. A new budget is one more row here: the schema, narrowing and docs follow from this table.
 */
export const BUDGET_KEYS = {
  maxTurns: { budget: 'maxTurns', perUnit: 1, whole: true },
  maxToolCalls: { budget: 'maxToolCalls', perUnit: 1, whole: true },
  maxTokens: { budget: 'maxTokens', perUnit: 1, whole: true },
  wallClockSeconds: { budget: 'wallClockMs', perUnit: 1000, whole: true },
  maxCostUsd: { budget: 'maxCostUsd', perUnit: 1, whole: false },
} as const satisfies Record<string, { budget: keyof Budgets; perUnit: number; whole: boolean }>;

export type BudgetKey = keyof typeof BUDGET_KEYS;

export const BUDGET_KEY_NAMES = Object.keys(BUDGET_KEYS) as BudgetKey[];
