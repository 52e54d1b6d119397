import type { EventDataOf } from '@gatehouse/shared';

type TurnUsage = EventDataOf<'model.output'>['usage'];

interface Totals {
  input: number;
  output: number;
  cached: number;
  cost: number;
  unpriced: boolean;
}

/**
 * A run's usage so far, for the live trace: each model.output adds its turn, and the line says
 * the totals (`[Σ 12.3k in, 4.1k cached, 1.2k out · $0.0123]`). Kept per run: a sub-agent's
 * lines show its own totals, its parent's its own.
 */
export class RunningTotals {
  private readonly runs = new Map<string, Totals>();

  add(runId: string, u: TurnUsage): string {
    const t = this.runs.get(runId) ?? { input: 0, output: 0, cached: 0, cost: 0, unpriced: false };
    t.input += u.inputTokens;
    t.output += u.outputTokens;
    t.cached += u.cachedInputTokens ?? 0;
    if (u.costUsd !== undefined) t.cost += u.costUsd;
    else if (u.inputTokens + u.outputTokens > 0) t.unpriced = true;
    this.runs.set(runId, t);
    const cached = t.cached > 0 ? `, ${short(t.cached)} cached` : '';
    const cost = t.unpriced ? '' : ` · $${t.cost.toFixed(4)}`;
    return `[Σ ${short(t.input)} in${cached}, ${short(t.output)} out${cost}]`;
  }
}

/** 950, 12.3k, 1.20M: a token count a person takes in at a glance. */
export function short(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 2 : 1)}k`;
  return `${(n / 1_000_000).toFixed(2)}M`;
}
