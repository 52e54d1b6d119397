import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import type { ReportUsage } from './report-agent-schema';

/**
 * The run's model usage: what run.completed recorded, else (older logs, unfinished runs) the sum of
 * its turns. A summed cost is null unless every turn that used tokens recorded one.
 */
export function usageOf(
  events: readonly EventEnvelope[],
  completed: EventDataOf<'run.completed'> | undefined,
  started: EventDataOf<'run.started'> | undefined,
): ReportUsage {
  const budgets = started?.budgets
    ? { maxTokens: started.budgets.maxTokens, maxCostUsd: started.budgets.maxCostUsd ?? null }
    : null;
  if (completed?.usage) return { ...completed.usage, source: 'run', budgets };
  let inputTokens = 0;
  let outputTokens = 0;
  let cached: number | null = null;
  let cost: number | null = 0;
  let costed = false;
  for (const e of events) {
    if (e.type !== 'model.output') continue;
    const u = e.data.usage;
    inputTokens += u.inputTokens;
    outputTokens += u.outputTokens;
    if (u.cachedInputTokens !== undefined) cached = (cached ?? 0) + u.cachedInputTokens;
    if (u.costUsd !== undefined) {
      costed = true;
      if (cost !== null) cost += u.costUsd;
    } else if (u.inputTokens + u.outputTokens > 0) cost = null;
  }
  return {
    inputTokens,
    outputTokens,
    cachedInputTokens: cached,
    costUsd: costed ? cost : null,
    source: 'turns',
    budgets,
  };
}
