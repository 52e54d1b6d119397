import { actionHash } from '@gatehouse/shared';
import type { ExecutionPlan, Tool, ToolContext } from '../tool';

export interface PlannedCall {
  plan: ExecutionPlan;
  /** The hash of exactly what will run (primitive and its input): what an approval records and the daemon checks. */
  executionHash: string;
}

/** How a validated call will run, and the hash that binds an approval to it. */
export function planCall(tool: Tool<unknown>, input: unknown, ctx: ToolContext): PlannedCall {
  const plan = tool.plan(input, ctx);
  return { plan, executionHash: actionHash({ name: plan.primitive, input: plan.input }) };
}
