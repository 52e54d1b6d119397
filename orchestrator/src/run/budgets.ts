/** What one run may spend; a sub-agent's budget is handed down from its parent's (agents/delegation.ts). */
export interface Budgets {
  maxTurns: number;
  maxToolCalls: number;
  /** Input plus output tokens over the whole run. */
  maxTokens: number;
  wallClockMs: number;
}
