import { canonicalJson, sha256Hex } from '@gatehouse/shared';
import type { Budgets } from '../run/budgets';

export interface Progress {
  turns: number;
  toolCalls: number;
  /** Input plus output tokens, this run's and its finished sub-agents'. */
  tokens: number;
  /** US dollars by the price table, this run's and its finished sub-agents' (0 when no price is known). */
  costUsd: number;
  /** When the run would have started had it been driven without a break (wall time counts only driven stretches). */
  startedAt: number;
}

/**
 * The stop reasons of budgets: a run that stops on one ends `partial`, decided by `budget`, and
 * can be resumed with more of it.
 */
export const BUDGET_STOPS = ['max_turns', 'max_tool_calls', 'token_budget', 'cost_budget', 'wall_clock'] as const;
export type BudgetStop = (typeof BUDGET_STOPS)[number];

/** Why a run must stop before its next model call, or undefined to go on. */
export function budgetStop(p: Progress, b: Budgets, now = Date.now()): BudgetStop | undefined {
  if (p.turns >= b.maxTurns) return 'max_turns';
  if (p.toolCalls >= b.maxToolCalls) return 'max_tool_calls';
  if (p.tokens >= b.maxTokens) return 'token_budget';
  if (b.maxCostUsd !== undefined && p.costUsd >= b.maxCostUsd) return 'cost_budget';
  if (now - p.startedAt >= b.wallClockMs) return 'wall_clock';
  return undefined;
}

/**
 * Spots a model stuck on the same failing call: identical tool and input, failing every time.
 * Any success, or any different call, resets it.
 */
export class RepeatedFailure {
  private last: string | undefined;
  private count = 0;
  constructor(private readonly limit = 3) {}

  /** Returns true when the same call has now failed `limit` times in a row. */
  record(tool: string, input: unknown, failed: boolean): boolean {
    let key: string;
    try {
      key = sha256Hex(canonicalJson({ tool, input: input ?? null }));
    } catch {
      key = `${tool}:${String(input)}`;
    }
    if (!failed) {
      this.last = undefined;
      this.count = 0;
      return false;
    }
    this.count = key === this.last ? this.count + 1 : 1;
    this.last = key;
    return this.count >= this.limit;
  }
}
