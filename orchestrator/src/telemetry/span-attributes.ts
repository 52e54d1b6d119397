import type { EventDataOf, EventOf } from '@gatehouse/shared';
import { GATEHOUSE as G, GEN_AI, OPERATION } from './genai-attributes';
import type { SpanAttributes, SpanHandle, SpanStart } from './span-port';

/**
 * `gen_ai.provider.name` and `gen_ai.request.model` from a model spec (`openai:gpt-4.1`). A scripted
 * model's spec is a file path, not a model name: it is reported as `scripted`.
 */
export function modelParts(spec: string): { provider: string; model: string } {
  const m = /^([a-z]+):(.*)$/i.exec(spec.trim());
  const prefix = m?.[1]?.toLowerCase() ?? 'unknown';
  if (prefix === 'scripted') return { provider: 'gatehouse.scripted', model: 'scripted' };
  return { provider: prefix, model: (m?.[2] ?? spec).split('#')[0] ?? spec };
}

export function chatStart(spec: string, d: EventDataOf<'model.request'>): Omit<SpanStart, 'start' | 'parent'> {
  const { provider, model } = modelParts(d.model || spec);
  return {
    name: `${OPERATION.chat} ${model}`,
    kind: 'client',
    attributes: {
      [GEN_AI.operationName]: OPERATION.chat,
      [GEN_AI.providerName]: provider,
      [GEN_AI.requestModel]: model,
      [G.turn]: d.turn,
      [G.contextSha256]: d.contextSha256,
    },
  };
}

export function chatEnd(span: SpanHandle, d: EventDataOf<'model.output'>): void {
  span.set({
    [GEN_AI.inputTokens]: d.usage.inputTokens,
    [GEN_AI.outputTokens]: d.usage.outputTokens,
    [GEN_AI.responseFinishReasons]: [d.stopReason],
    ...(d.usage.cachedInputTokens !== undefined ? { [GEN_AI.cacheReadInputTokens]: d.usage.cachedInputTokens } : {}),
    ...(d.usage.costUsd !== undefined ? { [G.costUsd]: d.usage.costUsd } : {}),
  });
  // The provider's message may quote the request: only its kind goes out.
  if (d.error) span.fail(d.error.kind, `the model call failed (${d.error.kind})`);
}

/** How a run ended (or paused), its whole usage, and an error status for a failed run. */
export function runEnd(span: SpanHandle, e: EventOf<'run.paused' | 'run.completed'>): void {
  if (e.type === 'run.paused') {
    span.set({ [G.status]: 'paused', [G.paused]: true });
    return;
  }
  const d = e.data;
  // A stop reason is a code, sometimes followed by a message (`sandbox_failed: …`): the code alone goes out.
  const code = d.stopReason.split(':')[0]?.trim().slice(0, 64) ?? '';
  span.set({
    [G.status]: d.status,
    [G.stopReason]: code,
    ...(d.decidedBy ? { [G.decidedBy]: d.decidedBy } : {}),
    ...(d.usage
      ? {
          [GEN_AI.inputTokens]: d.usage.inputTokens,
          [GEN_AI.outputTokens]: d.usage.outputTokens,
          ...(d.usage.costUsd !== null ? { [G.costUsd]: d.usage.costUsd } : {}),
        }
      : {}),
  });
  if (d.status === 'failed') span.fail(d.decidedBy ?? (code || 'failed'), `the run failed (${code})`);
}

export function approvalAttributes(d: {
  decision: string;
  rule: string;
  actionHash: string;
  approver?: string;
  channel?: string;
  scope?: string;
  requestId?: string;
  risk?: string[];
}): SpanAttributes {
  return {
    [G.decision]: d.decision,
    [G.rule]: d.rule,
    [G.actionHash]: d.actionHash,
    ...(d.approver ? { [G.approver]: d.approver } : {}),
    ...(d.channel ? { [G.channel]: d.channel } : {}),
    ...(d.scope ? { [G.scope]: d.scope } : {}),
    ...(d.requestId ? { [G.requestId]: d.requestId } : {}),
    ...(d.risk?.length ? { [G.risk]: d.risk } : {}),
  };
}
