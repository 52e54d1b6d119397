import { errorResult, STREAM_CAP, type InvocationResult } from '@gatehouse/shared';
import type { Handoff } from '../../agents/handoff';
import type { ExecutionPlan, RawResult } from '../tool';
import type { Grant, PipelineDeps } from './types';

const RESULT_CAP = 1024 * 1024;

/**
 * Runs a plan on its executor and brings back the raw result. Never throws for the sandbox: a call
 * that got no result back is a failed, `lost` result, so it still ends in a completion.
 */
export async function invokePlan(
  deps: PipelineDeps,
  plan: ExecutionPlan,
  callId: string,
  invocationId: string,
  grant: Grant,
  signal?: AbortSignal,
): Promise<RawResult> {
  if (plan.executor === 'orchestrator') {
    const delegate = deps.delegate;
    return {
      executor: 'orchestrator',
      result: await plan.run({
        readArtifact: (ref, offset, limit) => deps.log.artifacts.read(ref, offset, limit),
        ...(delegate ? { delegate: (h: Handoff) => delegate(h, callId, signal) } : {}),
      }),
    };
  }
  const chunks: string[] = [];
  let kept = 0;
  let complete = true;
  try {
    const result = await deps.sandbox.invoke(plan.primitive, plan.input, {
      approval: { id: grant.eventId, actionHash: grant.executionHash, by: grant.by },
      invocationId,
      intentId: invocationId,
      timeoutMs: plan.timeoutMs,
      outputCap: RESULT_CAP,
      onOutput: (c) => {
        if (kept + c.data.length > STREAM_CAP) complete = false;
        else {
          chunks.push(c.data);
          kept += c.data.length;
        }
      },
      ...(signal ? { signal } : {}),
    });
    // The streamed copy replaces the daemon's head and tail only if it is the whole output: every
    // byte arrived (the daemon stops streaming at its cap, and core NATS may drop a chunk).
    const streamed = chunks.join('');
    const fullOutput =
      result.truncated && complete && Buffer.byteLength(streamed) === result.bytes ? streamed : undefined;
    return { executor: 'sandbox', result, ...(fullOutput !== undefined ? { fullOutput } : {}) };
  } catch (e) {
    const message = (e as Error).message;
    return { executor: 'sandbox', result: lostResult(invocationId, deps.sandbox.sandboxId, message), lost: message };
  }
}

function lostResult(invocationId: string, sandboxId: string, message: string): InvocationResult {
  return errorResult({
    invocationId,
    runId: 'unknown',
    sandboxId,
    status: 'failed',
    code: 'internal',
    message: `the sandbox did not return a result: ${message}`,
  });
}
