import type { ExecutionPlan, Tool } from '../tool';
import { execute } from './execute';
import { observe } from './observe';
import type { CallResult, Grant, PipelineDeps } from './types';

/** Phases 4 and 5 for a call cleared to run: execute it, then observe its result. */
export async function executeAndObserve(
  deps: PipelineDeps,
  call: { callId: string; tool: Tool<unknown>; input: unknown },
  plan: ExecutionPlan,
  grant: Grant,
  signal?: AbortSignal,
): Promise<CallResult> {
  const executed = await execute(deps, call, plan, grant, signal);
  if (executed.kind === 'cancelled') return { kind: 'observed', observation: executed.observation };
  return observe(deps, call, plan, executed);
}
