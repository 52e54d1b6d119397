import { sha256Hex, type EventDataOf } from '@gatehouse/shared';
import { crashPoint } from '../crash-points';
import { sanitize } from '../observe/sanitize';
import { headTail } from '../observe/truncate';
import type { ExecutionPlan, Observed, RawResult, Tool, ToolContext } from '../tool';
import { recordObservation } from './record-observation';
import { record } from './record';
import { toolContext } from './tool-context';
import type { CallResult, PipelineDeps } from './types';
import type { RanCall } from './execute';

/**
 * Phase 5, observe: the raw result becomes one `tool.execution.completed` and the one observation
 * the model is shown — read by the tool, sanitised, redacted, and cut to the observation budget
 * (the whole text kept as an artifact when it is cut). A sub-agent that waits for approval leaves
 * the call pending instead: no completion, no observation.
 */
export function observe(
  deps: PipelineDeps,
  call: { callId: string; tool: Tool<unknown>; input: unknown },
  plan: ExecutionPlan,
  ran: Omit<RanCall, 'kind'>,
): CallResult {
  const { callId, tool, input } = call;
  const { raw, invocationId, startedId, durationMs } = ran;
  if (raw.executor === 'orchestrator' && raw.result.pending) {
    // A sub-agent waits for approval: this call stays open (no completion) and the run pauses too.
    return { kind: 'pending', callId, tool: tool.name, requestId: raw.result.pending.requestId };
  }
  const observed = safeObserve(tool, input, raw, toolContext(deps));
  // Redacted before it is cut: a cut through a secret would leave a fragment no pattern matches.
  // A result that never came back is said to be one: the model must not take it for a run that did nothing.
  const lost = raw.executor === 'sandbox' && raw.lost !== undefined ? `\n[no result: ${raw.lost}]` : '';
  const text = deps.log.redact(
    sanitize(observed.text) + (plan.executor === 'sandbox' && plan.note ? `\n[${plan.note}]` : '') + lost,
  );
  const artifact = text.length > deps.limits.observationBudget ? deps.log.artifacts.put(text) : undefined;
  const artifactRef = artifact?.ref;
  const r = raw.executor === 'sandbox' ? raw.result : undefined;
  const completed = record(
    deps,
    'tool.execution.completed',
    plan.executor === 'sandbox' ? 'sandbox' : 'runtime',
    {
      callId,
      invocationId,
      status: statusOf(raw),
      exitCode: r?.exitCode ?? null,
      signal: r?.signal ?? null,
      durationMs,
      bytes: r?.bytes ?? (raw.executor === 'orchestrator' ? Buffer.byteLength(raw.result.output) : 0),
      truncated: r?.truncated ?? false,
      filesChanged: r?.filesChanged ?? [],
      artifactRefs: artifactRef ? [artifactRef] : [],
      ...(artifact ? { artifacts: [{ ref: artifact.ref, sha256: artifact.sha256, bytes: artifact.bytes }] } : {}),
      ...(observed.fileHashes ? { fileHashes: observed.fileHashes } : {}),
      outputSha256: sha256Hex(r?.output ?? (raw.executor === 'orchestrator' ? raw.result.output : '')),
      ...(r?.error
        ? { error: { code: r.error.code, message: r.error.message } }
        : raw.executor === 'orchestrator' && raw.result.error
          ? { error: raw.result.error }
          : {}),
    },
    startedId,
  );
  crashPoint('after-completion');
  const shown = headTail(text, deps.limits.observationBudget, artifactRef);
  return recordObservation(deps, {
    callId,
    tool: tool.name,
    outcome: observed.ok ? 'ok' : 'failed',
    body: shown.text,
    causationId: completed.id,
    external: observed.external,
    ...(observed.origin ? { origin: observed.origin } : {}),
    truncated: shown.truncated,
    input,
    ...(artifactRef ? { artifactRef } : {}),
  });
}

function statusOf(raw: RawResult): EventDataOf<'tool.execution.completed'>['status'] {
  if (raw.executor === 'sandbox') return raw.lost !== undefined ? 'lost' : raw.result.status;
  return raw.result.ok ? 'ok' : 'failed';
}

/** A tool's reading of its result; a tool that throws on a result it did not expect still yields an observation. */
function safeObserve(tool: Tool<unknown>, input: unknown, raw: RawResult, ctx: ToolContext): Observed {
  try {
    return tool.observe(input, raw, ctx);
  } catch (e) {
    return { ok: false, text: `the result could not be read: ${(e as Error).message}`, external: false };
  }
}
