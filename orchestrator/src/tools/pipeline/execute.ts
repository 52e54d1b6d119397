import { newId } from '@gatehouse/shared';
import { crashPoint } from '../crash-points';
import { jsonSafe } from '../recorded-values';
import type { ExecutionPlan, RawResult, Tool } from '../tool';
import { invokePlan } from './invoke-plan';
import { record } from './record';
import { recordObservation } from './record-observation';
import type { Grant, PipelineDeps, Observation } from './types';

/** A call that ran (or was attempted): its raw result and the `tool.execution.started` it completes. */
export interface RanCall {
  kind: 'ran';
  invocationId: string;
  startedId: string;
  raw: RawResult;
  durationMs: number;
}

export type Executed = RanCall | { kind: 'cancelled'; observation: Observation };

/**
 * Phase 4, execute: with a grant in hand, `tool.execution.started` is recorded (and, unless the
 * call only reads, made durable) before anything can change; then the plan runs on its executor.
 * A run that is stopping runs nothing.
 */
export async function execute(
  deps: PipelineDeps,
  call: { callId: string; tool: Tool<unknown>; input: unknown },
  plan: ExecutionPlan,
  grant: Grant,
  signal?: AbortSignal,
): Promise<Executed> {
  const { callId, tool, input } = call;
  if (signal?.aborted) {
    const { observation } = recordObservation(deps, {
      callId,
      tool: tool.name,
      outcome: 'failed',
      body: 'cancelled before it ran: the run is stopping',
      causationId: grant.eventId,
      input,
    });
    return { kind: 'cancelled', observation };
  }
  crashPoint('before-execution');
  const invocationId = newId('inv');
  const started = record(
    deps,
    'tool.execution.started',
    'runtime',
    {
      callId,
      invocationId,
      executor: plan.executor,
      primitive: plan.primitive,
      input: jsonSafe(plan.input),
      timeoutMs: plan.timeoutMs,
      approvalId: grant.eventId,
      ...(plan.executor === 'sandbox' ? { sandboxId: deps.sandbox.sandboxId } : {}),
    },
    grant.eventId,
  );
  // Before anything can change, the decision and what is about to run are on disk. A read
  // changes nothing, so losing its record to a power cut loses nothing; it skips the fsync.
  // With a shared store, it holds them too (flush), and a run taken over by another writer stops here.
  if (!tool.isReadOnly(input)) await (deps.log.flush ? deps.log.flush() : deps.log.sync());
  const t0 = performance.now();
  const raw = await invokePlan(deps, plan, { toolName: tool.name, callId, invocationId }, grant, signal);
  crashPoint('after-execution');
  return { kind: 'ran', invocationId, startedId: started.id, raw, durationMs: elapsedMs(t0) };
}

/** Milliseconds since `t0`, to two decimals, as durations are recorded. */
export function elapsedMs(t0: number): number {
  return Math.round((performance.now() - t0) * 100) / 100;
}
