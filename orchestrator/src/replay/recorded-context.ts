import { sha256Hex, type EventDataOf, type EventEnvelope } from '@gatehouse/shared';
import { compileContext, type CompiledContext } from '../context/compile';
import { systemPrompt } from '../context/system';
import { StateTracker } from '../events/state';
import { stateSha256 } from '../events/state-hash';
import { checkInstruction } from '../loop/final-check';
import { DEFAULT_BUDGETS } from '../run/budgets';
import { codingTools } from '../tools/builtin/index';
import type { ModelToolSpec } from '../providers/types';

/** The context token budget the loop compiles with (run/drive.ts: nothing sets another one from the CLI). */
const LOOP_CONTEXT_TOKENS = 100_000;

/** One recorded model turn: the request the loop made and what the model answered. */
export interface RecordedTurn {
  turn: number;
  /** Index of its `model.request` in the recorded events: the context was compiled from the events before it. */
  requestIndex: number;
  request: EventDataOf<'model.request'>;
  /** Absent when the log ends before the answer (a crash mid-call). */
  output?: EventDataOf<'model.output'>;
}

/** What the loop compiled each context with: the standing rules, the task, the tools shown, the budget. */
export interface LoopSettings {
  system: string;
  task: string;
  tools: ModelToolSpec[];
  tokenBudget: number;
}

/** A recorded turn's context rebuilt from the log, with the hashes the loop recorded for comparison. */
export interface RebuiltContext {
  context: CompiledContext;
  contextSha256: string;
  stateSha256: string;
}

/** The model turns of a recorded run, in order, each with its answer. */
export function recordedTurns(events: readonly EventEnvelope[]): RecordedTurn[] {
  const turns: RecordedTurn[] = [];
  events.forEach((e, i) => {
    if (e.type === 'model.request') turns.push({ turn: e.data.turn, requestIndex: i, request: e.data });
    else if (e.type === 'model.output') {
      const open = turns.at(-1);
      if (open && open.turn === e.data.turn && !open.output) open.output = e.data;
    }
  });
  return turns;
}

/**
 * The settings run/drive.ts gave the loop, as far as the log records them: the system prompt is
 * this build's, made from the recorded budgets and check (a root run's check only), the tools are
 * this build's descriptions of the recorded surface. A build whose prompt or tool descriptions
 * changed rebuilds a different context: the context hash then differs, and says so.
 */
export function loopSettings(events: readonly EventEnvelope[]): LoopSettings {
  const first = events[0];
  if (first?.type !== 'run.started') throw new Error('a run log begins with run.started');
  const started = first.data;
  const budgets = started.budgets ?? DEFAULT_BUDGETS;
  const check = first.parentRunId ? undefined : started.config?.environment?.check;
  const rules = systemPrompt(budgets);
  return {
    system: check ? `${rules}\n${checkInstruction(check)}` : rules,
    task: started.task,
    tools: codingTools().describe(started.surface),
    tokenBudget: LOOP_CONTEXT_TOKENS,
  };
}

/** The context the loop compiled before a recorded turn, and the state it had folded by then. */
export function recordedContext(
  events: readonly EventEnvelope[],
  turn: RecordedTurn,
  settings: LoopSettings,
): RebuiltContext {
  const before = events.slice(0, turn.requestIndex);
  const context = compileContext(before, settings);
  return {
    context,
    contextSha256: sha256Hex(JSON.stringify(context.request)),
    stateSha256: stateSha256(new StateTracker(before).state),
  };
}
