import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { EventSpans } from '../../src/telemetry/event-spans';
import { startOtelPipeline } from '../../src/telemetry/otel-pipeline';
import { runSpanIdFor, traceIdFor } from '../../src/telemetry/trace-ids';
import { eventWriter, HASH } from './tree-events';

/** The real SDK pipeline, its spans kept by an exporter that records what it is given. */
async function pipeline() {
  const spans: ReadableSpan[] = [];
  const exporter: SpanExporter = {
    export: (batch, done) => {
      spans.push(...batch);
      done({ code: 0 });
    },
    shutdown: async () => undefined,
  };
  const p = await startOtelPipeline({ version: 'test', exportTimeoutMs: 1000, exporter });
  return { port: p.port, spans, flush: () => p.shutdown(2000) };
}
const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

const BASE = Date.parse('2026-01-02T03:04:05.000Z');
const ROOT = 'run_root';
const CHILD = 'run_child';

/** A root that reads a file, delegates to a child that runs a command, and answers. */
function tree(ev: ReturnType<typeof eventWriter>) {
  return [
    ev(ROOT, null, 0, 'run.started', {
      task: 'SECRET TASK',
      mode: 'sandboxed-auto',
      surface: [],
      model: 'openai:gpt-4.1',
      lineage: [ROOT],
    }),
    ev(ROOT, null, 10, 'model.request', {
      turn: 1,
      model: 'openai:gpt-4.1',
      messages: 2,
      estimatedTokens: 9,
      compacted: [],
      contextSha256: HASH,
    }),
    ev(ROOT, null, 110, 'model.output', {
      turn: 1,
      text: 'SECRET THOUGHTS',
      toolCalls: [{ callId: 'c1', name: 'read_file', input: { path: 'secret.txt' } }],
      stopReason: 'tool_use',
      usage: { inputTokens: 100, outputTokens: 20, cachedInputTokens: 40, costUsd: 0.01 },
      retries: 0,
    }),
    ev(ROOT, null, 120, 'tool.intent', { callId: 'c1', turn: 1, tool: 'read_file', input: { path: 'secret.txt' } }),
    ev(ROOT, null, 121, 'tool.validation', { callId: 'c1', ok: true, stage: 'semantic', errors: [] }),
    ev(ROOT, null, 122, 'tool.approval', {
      callId: 'c1',
      decision: 'allow',
      policyId: 'mode:sandboxed-auto',
      reason: 'r',
      actionHash: HASH,
    }),
    ev(ROOT, null, 130, 'tool.execution.completed', {
      callId: 'c1',
      invocationId: 'i',
      status: 'ok',
      exitCode: 0,
      signal: null,
      durationMs: 5,
      bytes: 3,
      truncated: false,
      filesChanged: [],
      artifactRefs: [],
    }),
    ev(ROOT, null, 140, 'tool.observation', {
      callId: 'c1',
      observationId: 'obs-1',
      tool: 'read_file',
      outcome: 'ok',
      content: 'SECRET CONTENT',
      truncated: false,
    }),
    ev(ROOT, null, 200, 'tool.intent', { callId: 'c2', turn: 2, tool: 'delegate', input: {} }),
    ev(ROOT, null, 201, 'tool.approval', {
      callId: 'c2',
      decision: 'allow',
      policyId: 'mode:sandboxed-auto',
      reason: 'r',
      actionHash: HASH,
    }),
    ev(ROOT, null, 210, 'agent.spawned', spawned()),
    ev(CHILD, ROOT, 211, 'run.started', {
      task: 'child task',
      mode: 'sandboxed-auto',
      surface: [],
      model: 'openai:gpt-4.1',
      lineage: [ROOT, CHILD],
    }),
    ev(CHILD, ROOT, 212, 'agent.spawned', spawned()),
    ev(CHILD, ROOT, 220, 'tool.intent', { callId: 'k1', turn: 1, tool: 'bash', input: { command: 'rm -rf /' } }),
    ev(CHILD, ROOT, 221, 'tool.approval', {
      callId: 'k1',
      decision: 'deny',
      policyId: 'deny[0] bash(rm*)',
      reason: 'r',
      actionHash: HASH,
    }),
    ev(CHILD, ROOT, 222, 'tool.observation', {
      callId: 'k1',
      observationId: 'obs-1',
      tool: 'bash',
      outcome: 'denied',
      content: 'no',
      truncated: false,
    }),
    ev(CHILD, ROOT, 230, 'model.request', {
      turn: 1,
      model: 'openai:gpt-4.1',
      messages: 2,
      estimatedTokens: 9,
      compacted: [],
      contextSha256: HASH,
    }),
    ev(CHILD, ROOT, 240, 'model.output', {
      turn: 1,
      text: '',
      toolCalls: [],
      stopReason: 'error',
      usage: { inputTokens: 0, outputTokens: 0 },
      retries: 2,
      error: { kind: 'rate_limited', message: 'SECRET PROVIDER MESSAGE' },
    }),
    ev(CHILD, ROOT, 250, 'run.completed', {
      status: 'failed',
      stopReason: 'model_error: SECRET DETAIL',
      decidedBy: 'model_error',
    }),
    ev(ROOT, null, 260, 'agent.completed', {
      parentRunId: ROOT,
      childRunId: CHILD,
      callId: 'c2',
      status: 'failed',
      stopReason: 'x',
      resultSha256: null,
      evidence: [],
      filesChanged: [],
      withheld: [],
    }),
    ev(ROOT, null, 270, 'tool.observation', {
      callId: 'c2',
      observationId: 'obs-2',
      tool: 'delegate',
      outcome: 'failed',
      content: 'x',
      truncated: false,
    }),
    ev(ROOT, null, 300, 'run.completed', {
      status: 'final',
      stopReason: 'final_answer',
      decidedBy: 'answer',
      answer: 'SECRET ANSWER',
      usage: { inputTokens: 100, outputTokens: 20, cachedInputTokens: 40, costUsd: 0.01 },
    }),
  ];
}
function spawned() {
  return {
    parentRunId: ROOT,
    childRunId: CHILD,
    callId: 'c2',
    reason: 'child task',
    handoffSha256: HASH,
    tools: ['bash'],
    paths: ['**'],
    evidence: [],
    budget: { turns: 1, toolCalls: 1, tokens: 1, seconds: 1 },
    policy: { mode: 'sandboxed-auto', source: 'built-in', sha256: HASH, rules: 0, paths: ['**'] },
    depth: 1,
  };
}

describe('EventSpans: events to GenAI spans', () => {
  it('a tree: invoke_agent, chat, execute_tool and gatehouse.approval spans, nested, timed by the events', async () => {
    const p = await pipeline();
    const spans = new EventSpans(p.port, BASE);
    for (const e of tree(eventWriter(BASE))) spans.onEvent(e);
    await p.flush();
    const named = (name: string) => p.spans.filter((s) => s.name === name);

    const root = named('invoke_agent gatehouse')[0]!;
    expect(root.spanContext().traceId).toBe(traceIdFor(ROOT));
    expect(root.spanContext().spanId).toBe(runSpanIdFor(ROOT, 0));
    expect(parentOf(root)).toBeUndefined();
    expect(ms(root.startTime)).toBe(BASE);
    expect(ms(root.endTime)).toBe(BASE + 300);
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4.1',
      'gen_ai.agent.name': 'gatehouse',
      'gen_ai.usage.input_tokens': 100,
      'gatehouse.run.status': 'final',
      'gatehouse.run.decided_by': 'answer',
    });

    const chat = named('chat gpt-4.1').find((s) => parentOf(s) === root.spanContext().spanId)!;
    expect(chat.kind).toBe(2); // SpanKind.CLIENT in the API's numbering
    expect([ms(chat.startTime), ms(chat.endTime)]).toEqual([BASE + 10, BASE + 110]);
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 20,
      'gen_ai.usage.cache_read.input_tokens': 40,
      'gen_ai.response.finish_reasons': ['tool_use'],
    });

    const read = named('execute_tool read_file')[0]!;
    expect(parentOf(read)).toBe(root.spanContext().spanId);
    expect([ms(read.startTime), ms(read.endTime)]).toEqual([BASE + 120, BASE + 140]);
    expect(read.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'c1',
      'gatehouse.tool.outcome': 'ok',
      'gatehouse.tool.exit_code': 0,
    });
    const decision = named('gatehouse.approval').find((s) => parentOf(s) === read.spanContext().spanId)!;
    expect(decision.attributes).toMatchObject({
      'gatehouse.approval.decision': 'allow',
      'gatehouse.approval.approver': 'policy',
      'gatehouse.approval.action_hash': HASH,
    });

    // The child: under the delegate call, in the root's trace; its denied call and failed model call are errors.
    const delegate = named('execute_tool delegate')[0]!;
    const child = named('invoke_agent sub-agent')[0]!;
    expect(parentOf(child)).toBe(delegate.spanContext().spanId);
    expect(child.spanContext().traceId).toBe(traceIdFor(ROOT));
    expect(child.spanContext().spanId).toBe(runSpanIdFor(CHILD, 0));
    expect(child.status.code).toBe(2);
    expect(child.attributes).toMatchObject({ 'error.type': 'model_error', 'gatehouse.run.stop_reason': 'model_error' });
    expect(delegate.attributes).toMatchObject({
      'gatehouse.sub_agent.run.id': CHILD,
      'gatehouse.sub_agent.status': 'failed',
    });
    const bash = named('execute_tool bash')[0]!;
    expect(bash.status.code).toBe(2);
    expect(bash.attributes['error.type']).toBe('denied');
    const denial = named('gatehouse.approval').find((s) => parentOf(s) === bash.spanContext().spanId)!;
    expect(denial.attributes).toMatchObject({
      'gatehouse.approval.decision': 'deny',
      'gatehouse.approval.rule': 'deny[0] bash(rm*)',
    });
    const failedChat = named('chat gpt-4.1').find((s) => parentOf(s) === child.spanContext().spanId)!;
    expect(failedChat.status.code).toBe(2);
    expect(failedChat.attributes['error.type']).toBe('rate_limited');

    // Content stays out: no task, model text, tool input or output, answer or provider message.
    const everything = JSON.stringify(p.spans.map((s) => [s.name, s.attributes, s.status, s.events]));
    expect(everything).not.toMatch(/SECRET|secret\.txt|rm -rf/);
  });

  it('a resumed run: history makes no spans, the new process continues the same trace', async () => {
    const ev = eventWriter(BASE);
    const before = [
      ev(ROOT, null, 0, 'run.started', {
        task: 't',
        mode: 'sandboxed-auto',
        surface: [],
        model: 'openai:gpt-4.1',
        lineage: [ROOT],
      }),
      ev(ROOT, null, 10, 'tool.intent', { callId: 'c1', turn: 1, tool: 'bash', input: {} }),
      ev(ROOT, null, 11, 'tool.approval', {
        callId: 'c1',
        decision: 'ask',
        policyId: 'ask[0] bash(*)',
        reason: 'r',
        actionHash: HASH,
      }),
      ev(ROOT, null, 12, 'approval.requested', {
        requestId: 'apr_1',
        callId: 'c1',
        tool: 'bash',
        input: {},
        actionHash: HASH,
        executionHash: HASH,
        rule: 'ask[0] bash(*)',
        reason: 'r',
        risk: [],
        shape: 's',
        lineage: [ROOT],
      }),
      ev(ROOT, null, 20, 'run.paused', { pending: ['apr_1'], workspace: { dir: null, files: [], deleted: [] } }),
      // Written by `gatehouse approve` between the processes.
      ev(ROOT, null, 5000, 'approval.granted', {
        requestId: 'apr_1',
        callId: 'c1',
        actionHash: HASH,
        executionHash: HASH,
        scope: 'once',
        approver: 'user:ana',
        channel: 'cli',
        reason: 'ok',
      }),
    ];
    const live = [
      ev(ROOT, null, 9000, 'sandbox.started', { sandboxId: 'sbx_1', containerId: 'c', image: 'i', timings: {} }),
      ev(ROOT, null, 9010, 'run.resumed', { fromSeq: 5, workspaceFrom: 'checkpoint', files: [] }),
      ev(ROOT, null, 9100, 'tool.observation', {
        callId: 'c1',
        observationId: 'obs-1',
        tool: 'bash',
        outcome: 'ok',
        content: 'x',
        truncated: false,
      }),
      ev(ROOT, null, 9200, 'run.completed', { status: 'final', stopReason: 'final_answer' }),
    ];
    const p = await pipeline();
    const spans = new EventSpans(p.port, BASE + 8000);
    for (const e of [...before, ...live]) spans.onEvent(e);
    await p.flush();

    expect(p.spans.map((s) => s.name).sort()).toEqual([
      'execute_tool bash',
      'gatehouse.approval',
      'invoke_agent gatehouse',
    ]);
    expect(new Set(p.spans.map((s) => s.spanContext().traceId))).toEqual(new Set([traceIdFor(ROOT)]));
    const root = p.spans.find((s) => s.name === 'invoke_agent gatehouse')!;
    expect(root.spanContext().spanId).toBe(runSpanIdFor(ROOT, 6)); // the seq of its first live event
    expect(root.attributes['gatehouse.resumed']).toBe(true);
    expect(ms(root.startTime)).toBe(BASE + 9000);
    const call = p.spans.find((s) => s.name === 'execute_tool bash')!;
    expect(parentOf(call)).toBe(root.spanContext().spanId);
    expect(call.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'c1',
      'gatehouse.resumed': true,
      'gatehouse.tool.outcome': 'ok',
    });
    const grant = p.spans.find((s) => s.name === 'gatehouse.approval')!;
    expect(parentOf(grant)).toBe(call.spanContext().spanId);
    expect(ms(grant.startTime)).toBe(BASE + 5000);
    expect(grant.attributes).toMatchObject({
      'gatehouse.approval.decision': 'allow',
      'gatehouse.approval.rule': 'ask[0] bash(*)',
      'gatehouse.approval.approver': 'user:ana',
      'gatehouse.approval.channel': 'cli',
    });
  });

  it('a pause ends every open span, marked paused; endAll marks the rest unfinished', async () => {
    const ev = eventWriter(BASE);
    const p = await pipeline();
    const spans = new EventSpans(p.port, BASE);
    spans.onEvent(
      ev(ROOT, null, 0, 'run.started', {
        task: 't',
        mode: 'm',
        surface: [],
        model: 'anthropic:claude-x',
        lineage: [ROOT],
      }),
    );
    spans.onEvent(ev(ROOT, null, 1, 'tool.intent', { callId: 'c1', turn: 1, tool: 'bash', input: {} }));
    spans.onEvent(ev(ROOT, null, 2, 'run.paused', { pending: [], workspace: { dir: null, files: [], deleted: [] } }));
    // Written after the pause (a refused approval answer): the paused run opens nothing again.
    spans.onEvent(ev(ROOT, null, 2, 'approval.rejected', { requestId: 'apr_x', channel: 'nats', reason: 'bad' }));
    spans.onEvent(
      ev(CHILD, null, 3, 'run.started', {
        task: 't',
        mode: 'm',
        surface: [],
        model: 'anthropic:claude-x',
        lineage: [CHILD],
      }),
    );
    spans.onEvent(
      ev(CHILD, null, 4, 'model.request', {
        turn: 1,
        model: 'anthropic:claude-x',
        messages: 1,
        estimatedTokens: 1,
        compacted: [],
        contextSha256: HASH,
      }),
    );
    spans.endAll(new Date(BASE + 50));
    await p.flush();
    const of = (name: string) => p.spans.filter((s) => s.name === name);
    expect(of('execute_tool bash')[0]!.attributes['gatehouse.paused']).toBe(true);
    expect(p.spans.filter((s) => s.attributes['gatehouse.run.id'] === ROOT)).toHaveLength(1);
    expect(of('invoke_agent gatehouse').map((s) => s.attributes['gatehouse.run.status'])).toEqual([
      'paused',
      undefined,
    ]);
    expect(of('chat claude-x')[0]!.attributes['gatehouse.unfinished']).toBe(true);
    expect(ms(of('chat claude-x')[0]!.endTime)).toBe(BASE + 50);
    expect(of('chat claude-x')[0]!.attributes['gen_ai.provider.name']).toBe('anthropic');
  });
});
