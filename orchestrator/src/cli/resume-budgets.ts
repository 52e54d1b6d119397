import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { activeWallMs, fold } from '../events/state';
import { budgetStop, type BudgetStop } from '../loop/stop';
import { DEFAULT_BUDGETS, type Budgets } from '../run/budgets';
import { ResumeError } from '../run/resume';
import type { PriceInForce } from '../usage/model-price';
import { priceFor } from '../usage/price-for';
import { requirePrice } from '../usage/require-price';
import { treeUsage } from '../usage/tree-usage';
import { budgetFlags, type RunConfigFlags } from './run-config';

type BudgetFlags = Pick<RunConfigFlags, 'maxTurns' | 'maxToolCalls' | 'maxTokens' | 'maxCost' | 'maxWall' | 'explicit'>;

/** The flag that raises each budget, for a person told their run is out of one. */
export const FLAG_OF: Record<BudgetStop, string> = {
  max_turns: '--max-turns',
  max_tool_calls: '--max-tool-calls',
  token_budget: '--max-tokens',
  cost_budget: '--max-cost',
  wall_clock: '--max-wall',
};

/**
 * A resumed run's budgets and price: the ones it recorded, with any budget flag given now over
 * them (a run that stopped on a budget continues only with more of it), and the price it started
 * with. Refused before anything starts when a budget it stopped on is still spent: it would stop
 * again at once.
 */
export function resumeBudgets(
  stateDir: string,
  runId: string,
  started: EventDataOf<'run.started'>,
  events: readonly EventEnvelope[],
  flags: BudgetFlags,
): { budgets: Budgets; price?: PriceInForce } {
  // The budgets last recorded: those of the last resume (which may have raised them), else the start's.
  const resumed = events.findLast((e) => e.type === 'run.resumed' && e.data.budgets !== undefined);
  const recorded: Budgets = (resumed?.type === 'run.resumed' ? resumed.data.budgets : undefined) ??
    started.budgets ?? { ...DEFAULT_BUDGETS };
  const budgets: Budgets = {
    ...recorded,
    maxTurns: flags.explicit?.maxTurns ? flags.maxTurns : recorded.maxTurns,
    maxToolCalls: flags.explicit?.maxToolCalls ? flags.maxToolCalls : recorded.maxToolCalls,
    ...budgetFlags(flags),
  };
  // Older logs did not record a price: the built-in table's, if it has the model.
  const price: PriceInForce | undefined = started.price ?? priceFor(started.model ?? '');
  requirePrice(started.model ?? '', budgets, price);

  const state = fold(events);
  if (state.status === 'partial' && state.decidedBy === 'budget') {
    const used = treeUsage(stateDir, runId, events);
    const spent = {
      turns: state.turns,
      toolCalls: state.toolCalls,
      tokens: used.inputTokens + used.outputTokens,
      costUsd: used.costUsd,
      startedAt: 0,
    };
    const stop = budgetStop(spent, budgets, activeWallMs(state, 0));
    if (stop)
      throw new ResumeError(
        `run ${runId} stopped on its budget (${state.stopReason ?? stop}) and ${stop} is still spent ` +
          `(${spentText(stop, spent, state.activeMs, budgets)}): resume it with a higher ${FLAG_OF[stop]}`,
      );
  }
  return { budgets, ...(price ? { price } : {}) };
}

function spentText(
  stop: BudgetStop,
  s: { turns: number; toolCalls: number; tokens: number; costUsd: number },
  wallMs: number,
  b: Budgets,
): string {
  switch (stop) {
    case 'max_turns':
      return `${s.turns} of ${b.maxTurns} turns`;
    case 'max_tool_calls':
      return `${s.toolCalls} of ${b.maxToolCalls} tool calls`;
    case 'token_budget':
      return `${s.tokens} of ${b.maxTokens} tokens`;
    case 'cost_budget':
      return `$${s.costUsd.toFixed(4)} of $${b.maxCostUsd ?? 0}`;
    case 'wall_clock':
      return `${Math.round(wallMs / 1000)} s of ${Math.round(b.wallClockMs / 1000)} s`;
  }
}
