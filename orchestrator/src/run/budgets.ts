/** What one run may spend; a sub-agent's budget is handed down from its parent's (agents/delegation.ts). */
export interface Budgets {
  maxTurns: number;
  maxToolCalls: number;
  /** Input plus output tokens over the whole run. */
  maxTokens: number;
  wallClockMs: number;
  /** Spend ceiling in US dollars, by the price table (absent: no cost budget). */
  maxCostUsd?: number;
}

/**
 * A run's budgets when neither a flag nor a config sets them. A repository's config may only lower
 * them (config/narrow.ts), so they are also the ceiling an untrusted config is held to.
 */
export const DEFAULT_BUDGETS: Budgets = {
  maxTurns: 30,
  maxToolCalls: 100,
  maxTokens: 2_000_000,
  wallClockMs: 30 * 60_000,
};
