import { isEvent, sha256Hex, type EventEnvelope, type EventOf } from '@gatehouse/shared';
import { compileContext, type CompiledContext } from '../context/compile';
import { contextSha256 } from '../context/context-hash';
import { StateTracker, type RunState } from '../events/state';
import { stateSha256 } from '../events/state-hash';
import { planSurface } from '../plan/plan-driver';
import { planSystemPrompt } from '../plan/plan-prompt';
import { DEFAULT_BUDGETS, type Budgets } from '../run/budgets';
import { runSystemPrompt } from '../run/run-system-prompt';
import { recordedMcpTools } from '../mcp/recorded-tools';
import { codingTools } from '../tools/builtin/index';

/** What the loop gave compileContext when the log does not say: its default (drive.ts). */
export const DEFAULT_CONTEXT_TOKEN_BUDGET = 100_000;

/** One recorded model call, its state and context rebuilt from the events before it. */
export interface RebuiltTurn {
  request: EventOf<'model.request'>;
  /** Hash of the state folded from the events before the request (events/state-hash.ts). */
  stateSha256: string;
  /** The context as the loop would have compiled it then, and its hash as loop.ts takes it (context-hash.ts). */
  context: CompiledContext;
  contextSha256: string;
  /**
   * Its hash as loops before the canonical hash took it (JSON of the key order read back from the log):
   * the recorded hash of an older log is this one when it is of the same context.
   */
  legacyContextSha256: string;
  /** Observations the model was shown in that context (ids), in order. */
  observations: string[];
  /** The model's recorded answer to this request, when the log has it. */
  output: EventOf<'model.output'> | undefined;
}

/**
 * Rebuilds, for each `model.request` of a run's log, what the loop had in hand just before it:
 * the state (a fold of the events before it) and the context compiled from those same events, with
 * the system prompt, task, tool specs and token budget the run used — all taken from the log:
 * run.started (task, surface, budgets, the config's check, plan mode), run.resumed (budgets from then
 * on), model.request (its token budget). A plan run is rebuilt as drive.ts runs it: plan mode's system
 * prompt (and no check: its tasks decide it), and the tools of the plan's phase at that turn (the
 * controller's, plan/plan-driver.ts). Nothing is executed and nothing is read but the events.
 * One turn at a time: a long run's contexts are not all held at once.
 */
export function* rebuildTurns(events: readonly EventEnvelope[]): Generator<RebuiltTurn> {
  const first = events[0];
  if (!first || !isEvent(first, 'run.started')) return;
  const started = first.data;
  const registry = codingTools();
  // MCP tools joined the surface once the sandbox was up (mcp.listed), after the ones run.started names.
  const mcp = recordedMcpTools(events);
  registry.add(mcp);
  const surface = [...started.surface, ...mcp.map((t) => t.name)];
  const tools = registry.describe(surface);
  // The check decides (and is named in the prompt of) the root run only; a sub-agent is judged by its parent.
  const root = !first.parentRunId && (started.lineage?.length ?? 1) <= 1;
  const check = root ? started.config?.environment?.check : undefined;
  const planMode = started.planMode === true;
  const system = (b: Pick<Budgets, 'maxTurns' | 'maxToolCalls'>) =>
    planMode ? planSystemPrompt(runSystemPrompt(b)) : runSystemPrompt(b, check);
  let budgets: Pick<Budgets, 'maxTurns' | 'maxToolCalls'> = started.budgets ?? DEFAULT_BUDGETS;
  const tracker = new StateTracker();
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    if (isEvent(e, 'model.request')) {
      const state = tracker.state;
      const context = compileContext(events.slice(0, i), {
        system: system(budgets),
        task: started.task,
        tools: planMode ? registry.describe(planSurface(state.plan, surface, registry)) : tools,
        tokenBudget: e.data.contextTokenBudget ?? DEFAULT_CONTEXT_TOKEN_BUDGET,
      });
      yield {
        request: e,
        stateSha256: stateSha256(state),
        context,
        contextSha256: contextSha256(context.request),
        legacyContextSha256: sha256Hex(JSON.stringify(context.request)),
        observations: shownObservations(state, context),
        output: answerTo(events, i),
      };
    }
    // A resume may hold the run to new budgets, and the system prompt names them.
    if (isEvent(e, 'run.resumed') && e.data.budgets) budgets = e.data.budgets;
    tracker.apply(e);
  }
}

/** Ids of the observations whose content (or compacted reference) is in the context. */
function shownObservations(state: RunState, context: CompiledContext): string[] {
  const shown = new Set<string>();
  for (const m of context.request.messages) if (m.role === 'tool') shown.add(m.callId);
  return state.observations.filter((o) => shown.has(o.callId)).map((o) => o.id);
}

/** The model.output of the turn a model.request at `index` began, before the next request. */
function answerTo(events: readonly EventEnvelope[], index: number): EventOf<'model.output'> | undefined {
  for (let j = index + 1; j < events.length; j++) {
    const e = events[j]!;
    if (isEvent(e, 'model.request')) return undefined;
    if (isEvent(e, 'model.output')) return e;
  }
  return undefined;
}
