import type { EventEnvelope } from '@gatehouse/shared';
import { fold, type UsageTotals } from '../events/state';
import { RunLog } from '../events/store';

const NONE: UsageTotals = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsd: 0, unpricedTurns: 0 };

/**
 * What a run's sub-agents used, their own sub-agents included, read from their logs. A parent's
 * totals and budgets count its whole tree: the root's cost is what the tree cost. A child whose
 * log cannot be read counts as nothing (its usage is unknown, not invented). `done` caches
 * children whose agent.completed the parent holds: their logs no longer change in this drive.
 */
export function childrenUsage(
  stateDir: string,
  runId: string,
  events: readonly EventEnvelope[],
  done: Map<string, UsageTotals> = new Map(),
  depth = 0,
): UsageTotals {
  const total = { ...NONE };
  if (depth > 16) return total;
  const children = new Set<string>();
  const completed = new Set<string>();
  for (const e of events) {
    if (e.type === 'agent.spawned' && e.data.parentRunId === runId) children.add(e.data.childRunId);
    if (e.type === 'agent.completed' && e.data.parentRunId === runId) completed.add(e.data.childRunId);
  }
  for (const child of children) {
    let used = done.get(child);
    if (!used) {
      used = treeOf(stateDir, child, depth + 1);
      if (completed.has(child)) done.set(child, used);
    }
    add(total, used);
  }
  return total;
}

/** A run's own usage plus its sub-agents'. */
export function treeUsage(stateDir: string, runId: string, events: readonly EventEnvelope[]): UsageTotals {
  const total = { ...fold(events).usage };
  add(total, childrenUsage(stateDir, runId, events));
  return total;
}

function treeOf(stateDir: string, runId: string, depth: number): UsageTotals {
  let events: EventEnvelope[];
  try {
    events = RunLog.readEvents(stateDir, runId);
  } catch {
    return NONE;
  }
  const total = { ...fold(events).usage };
  add(total, childrenUsage(stateDir, runId, events, new Map(), depth));
  return total;
}

export function addUsage(into: UsageTotals, more: UsageTotals): UsageTotals {
  add(into, more);
  return into;
}

function add(into: UsageTotals, more: UsageTotals): void {
  into.inputTokens += more.inputTokens;
  into.outputTokens += more.outputTokens;
  into.cachedInputTokens += more.cachedInputTokens;
  into.costUsd += more.costUsd;
  into.unpricedTurns += more.unpricedTurns;
}
