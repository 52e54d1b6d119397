import { errorResult, STREAM_CAP } from '@gatehouse/shared';
import { SandboxLostError } from '../../sandbox/errors';
import type { Handoff } from '../../agents/handoff';
import type { ExecutionPlan, RawResult } from '../tool';
import type { Grant, PipelineDeps } from './types';

const RESULT_CAP = 1024 * 1024;

/**
 * Runs a plan on its executor and brings back the raw result. Never throws for the sandbox: a call
 * that got no result back is a failed, `lost` result, so it still ends in a completion.
 *
 * The run's powers go by the registered tool's name, not by what its plan asks for: only `delegate`
 * can spawn a sub-agent and only `remember` can write memory, so no other tool (an MCP server's, say)
 * can reach either, whatever its plan does.
 */
export async function invokePlan(
  deps: PipelineDeps,
  plan: ExecutionPlan,
  call: { toolName: string; callId: string; invocationId: string },
  grant: Grant,
  signal?: AbortSignal,
): Promise<RawResult> {
  const { callId, invocationId } = call;
  if (plan.executor === 'orchestrator') {
    const delegate = call.toolName === 'delegate' ? deps.delegate : undefined;
    const memory = call.toolName === 'remember' ? deps.memory : undefined;
    return {
      executor: 'orchestrator',
      result: await plan.run({
        approval: { id: grant.eventId, by: grant.by },
        readArtifact: (ref, offset, limit) => deps.log.artifacts.read(ref, offset, limit),
        ...(delegate ? { delegate: (h: Handoff) => delegate(h, callId, signal) } : {}),
        ...(memory ? { remember: (p) => memory.store(p, { callId, grantEventId: grant.eventId }) } : {}),
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
    // The sandbox died under the call: it may have run in part, in full or not at all, and nobody can
    // ask any more. The record says so; nothing runs it again (a fresh sandbox starts from the last
    // checkpoint, taken before this call: run/sandbox-replacement.ts).
    const lostWith =
      e instanceof SandboxLostError
        ? {
            code: 'internal' as const,
            message:
              `the sandbox was lost while this ran (${e.reason}); its outcome is unknown: it may have run in part, ` +
              'in full or not at all, and it is not run again',
          }
        : { code: 'internal' as const, message: `the sandbox did not return a result: ${message}` };
    return {
      executor: 'sandbox',
      result: errorResult({
        invocationId,
        runId: 'unknown',
        sandboxId: deps.sandbox.sandboxId,
        status: 'failed',
        ...lostWith,
      }),
      lost: lostWith.message,
    };
  }
}
