import { canonicalJson, sha256Hex } from '@gatehouse/shared';
import type { Budgets } from '../run/budgets';

export interface Progress {
  turns: number;
  toolCalls: number;
  tokens: number;
  startedAt: number;
}

/** Why a run must stop before its next model call, or undefined to go on. */
export function budgetStop(p: Progress, b: Budgets, now = Date.now()): string | undefined {
  if (p.turns >= b.maxTurns) return 'max_turns';
  if (p.toolCalls >= b.maxToolCalls) return 'max_tool_calls';
  if (p.tokens >= b.maxTokens) return 'token_budget';
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
