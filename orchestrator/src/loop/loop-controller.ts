import type { ModelToolSpec } from '../providers/types';
import type { CallResult, ToolCall } from '../tools/pipeline';
import type { LoopOutcome } from './loop-outcome';

/**
 * What a mode changes about the agent loop (plan mode: plan/plan-driver.ts). Everything else — the
 * budgets, the model call, the pipeline, resume — stays the loop's. Each hook may end or pause the
 * run by returning an outcome; undefined lets the loop go on.
 */
export interface LoopController {
  /** The tools shown to the model this turn (default: the loop's own). */
  tools?(): ModelToolSpec[];
  /** Before each model call (turn: the last one taken): may start work of its own or end the run. */
  beforeTurn?(turn: number, signal: AbortSignal): Promise<LoopOutcome | undefined>;
  /** A reply without tool calls, in place of the final-answer contract: undefined asks the model again. */
  onText?(turn: number, text: string): LoopOutcome | undefined;
  /** Fields every call of this turn carries (plan mode: the current task's id). */
  callFields?(): Pick<ToolCall, 'taskId'>;
  /** After a call left the pipeline (also one a resume finished or found finished). */
  afterCall?(call: ToolCall, result: CallResult, signal: AbortSignal): Promise<LoopOutcome | undefined>;
}
