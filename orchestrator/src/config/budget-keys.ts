import type { Budgets } from '../run/budgets';

/**
 * The config's `budgets` keys and the run budget each one sets. A config speaks in units people
 * write (seconds); the run counts in its own (milliseconds). A new budget (issue 13's cost) is one
 * more row here: the schema, narrowing and docs follow from this table.
 */
export const BUDGET_KEYS = {
  maxTurns: { budget: 'maxTurns', perUnit: 1 },
  maxToolCalls: { budget: 'maxToolCalls', perUnit: 1 },
  maxTokens: { budget: 'maxTokens', perUnit: 1 },
  wallClockSeconds: { budget: 'wallClockMs', perUnit: 1000 },
} as const satisfies Record<string, { budget: keyof Budgets; perUnit: number }>;

export type BudgetKey = keyof typeof BUDGET_KEYS;

export const BUDGET_KEY_NAMES = Object.keys(BUDGET_KEYS) as BudgetKey[];
