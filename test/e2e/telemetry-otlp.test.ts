import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cli, handoff, repo, scriptFile, why, type Event } from '../support/delegation';
import { runSpanIdFor, traceIdFor } from '../../orchestrator/src/telemetry/trace-ids';
import type { DecodedSpan } from '../support/otlp-proto';
import { startOtlpReceiver, until, type OtlpReceiver } from '../support/otlp-receiver';

/**
 * OpenTelemetry through the real CLI, scripted models and real sandboxes: the spans a tree sends to a
 * local OTLP/HTTP receiver (decoded from protobuf), one trace across a parent, its sub-agent and a
 * resume in another process; nothing sent without the variables; a hung collector costs at most the
 * flush bound.
 */
const OTEL_VARS = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'GATEHOUSE_OTEL_FLUSH_MS'];
const saved = Object.fromEntries(OTEL_VARS.map((k) => [k, process.env[k]]));
const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  for (const k of OTEL_VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
async function receiver(o: Parameters<typeof startOtlpReceiver>[0] = {}): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver(o);
  receivers.push(r);
  return r;
}

/** The CLI, asynchronously: the receiver answers from this process's event loop meanwhile. */
function cliAsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, CI: 'true' }, stdio: 'pipe' });
    child.stdin.end();
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** Like ../support/delegation's run, without blocking this process. */
async function run(dir: string, script: unknown) {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-state-'));
  const r = await cliAsync([
    'run',
    'task',
    '--repo',
    dir,
    '--model',
    `scripted:${scriptFile(script)}`,
    '--json',
    '--state-dir',
    stateDir,
    '--mode',
    'sandboxed-auto',
  ]);
  const all = r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event & { ts: string });
  const rootId = all.find((e) => e.parentRunId === null)!.runId;
  const logOf = (runId: string) =>
    readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Event & { ts: string });
  return { r, stateDir, rootId, parent: logOf(rootId), logOf, why: why(r.stderr, all) };
}

const byId = (spans: DecodedSpan[]) => new Map(spans.map((s) => [s.spanId, s]));

describe('OpenTelemetry spans (real CLI, real sandboxes)', () => {
  it('a paused tree and its resume in another process: one trace, sub-agent under the delegate call', async () => {
    const otlp = await receiver();
    for (const k of OTEL_VARS) delete process.env[k];
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.endpoint;
    const dir = repo({
      'README.md': '# x\n',
      '.gatehouse/policy.json': JSON.stringify({ mode: 'sandboxed-auto', ask: ['bash(echo ran*)'] }),
    });
    const script = {
      turns: [
        { toolCalls: [{ name: 'read_file', input: { path: 'README.md' } }] },
        { toolCalls: [handoff('record a run', ['bash'], ['**'])] },
        { final: 'The sub-agent recorded the run (obs-4).' },
      ],
      children: [
        {
          turns: [
            { toolCalls: [{ name: 'bash', input: { command: 'echo ran >> ran.log' } }] },
            { final: 'ok (obs-1)' },
          ],
        },
      ],
    };
    const first = await run(dir, script);
    expect(first.r.status, first.why).toBe(3); // paused for the child's ask
    const childId = String(first.parent.find((e) => e.type === 'agent.spawned')!.data.childRunId);
    const firstSpans = [...otlp.spans];
    expect(firstSpans.length).toBeGreaterThan(0);

    const traceIds = new Set(firstSpans.map((s) => s.traceId));
    expect(traceIds.size).toBe(1);
    const spans = byId(firstSpans);
    const rootSpan = firstSpans.find((s) => s.name === 'invoke_agent gatehouse')!;
    expect(rootSpan).toBeDefined();
    expect(rootSpan.parentSpanId).toBe('');
    // Derived from the run ids (docs/telemetry.md): found from a run id alone.
    expect(rootSpan.traceId).toBe(traceIdFor(first.rootId));
    expect(rootSpan.spanId).toBe(runSpanIdFor(first.rootId, 0));
    expect(rootSpan.kind).toBe(1); // INTERNAL
    expect(rootSpan.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'gatehouse',
      'gen_ai.provider.name': 'gatehouse.scripted',
      'gatehouse.run.id': first.rootId,
      'gatehouse.run.status': 'paused',
    });
    expect(rootSpan.resource['service.name']).toBe('gatehouse');

    // chat spans under the root, with usage and the finish reason.
    const chats = firstSpans.filter((s) => s.name === 'chat scripted' && s.parentSpanId === rootSpan.spanId);
    expect(chats.length).toBeGreaterThanOrEqual(2);
    expect(chats[0]!.kind).toBe(3); // CLIENT
    expect(chats[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'scripted' });
    expect(typeof chats[0]!.attributes['gen_ai.usage.input_tokens']).toBe('number');
    expect(typeof chats[0]!.attributes['gen_ai.usage.output_tokens']).toBe('number');
    expect(chats[0]!.attributes['gen_ai.response.finish_reasons']).toEqual(['tool_use']);

    // The read: execute_tool with the call id, its outcome and exit code, and the policy's decision under it.
    const read = firstSpans.find((s) => s.name === 'execute_tool read_file')!;
    expect(read.parentSpanId).toBe(rootSpan.spanId);
    const readIntent = first.parent.find((e) => e.type === 'tool.intent' && e.data.tool === 'read_file')!;
    expect(read.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'read_file',
      'gen_ai.tool.call.id': readIntent.data.callId,
      'gatehouse.tool.outcome': 'ok',
    });
    const readDecision = firstSpans.find((s) => s.name === 'gatehouse.approval' && s.parentSpanId === read.spanId)!;
    const readApproval = first.parent.find(
      (e) => e.type === 'tool.approval' && e.data.callId === readIntent.data.callId,
    )!;
    expect(readDecision.attributes).toMatchObject({
      'gatehouse.approval.decision': 'allow',
      'gatehouse.approval.approver': 'policy',
      'gatehouse.approval.rule': readApproval.data.policyId,
      'gatehouse.approval.action_hash': readApproval.data.actionHash,
    });
    // No content: the file's text is in no attribute.
    expect(JSON.stringify(firstSpans.map((s) => s.attributes))).not.toContain('# x');

    // The sub-agent's run under the parent's delegate call, in the same trace.
    const childSpan = firstSpans.find((s) => s.attributes['gatehouse.run.id'] === childId)!;
    expect(childSpan.name).toBe('invoke_agent sub-agent');
    expect(childSpan.spanId).toBe(runSpanIdFor(childId, 0));
    const delegate = spans.get(childSpan.parentSpanId)!;
    expect(delegate.name).toMatch(/^execute_tool /);
    expect(delegate.parentSpanId).toBe(rootSpan.spanId);
    expect(delegate.attributes['gatehouse.sub_agent.run.id']).toBe(childId);
    // The child's ask: the policy said ask, and the person's decision was pending at the pause.
    const bash = firstSpans.find((s) => s.name === 'execute_tool bash' && s.parentSpanId === childSpan.spanId)!;
    expect(bash.attributes['gatehouse.paused']).toBe(true);
    const decisions = firstSpans.filter((s) => s.name === 'gatehouse.approval' && s.parentSpanId === bash.spanId);
    expect(decisions.map((d) => d.attributes['gatehouse.approval.decision']).sort()).toEqual(['ask', 'pending']);

    // Approve (another process, no spans of its own), then resume in a third process.
    const cli2 = (args: string[]) => cliAsync([...args, '--state-dir', first.stateDir]);
    const requestId = String(first.logOf(childId).find((e) => e.type === 'approval.requested')!.data.requestId);
    expect((await cli2(['approve', first.rootId, requestId])).status).toBe(0);
    const before = otlp.spans.length;
    const resumed = await cli2(['resume', first.rootId, '--json']);
    expect(resumed.status, resumed.stderr + resumed.stdout).toBe(0);
    const later = otlp.spans.slice(before);
    expect(later.length).toBeGreaterThan(0);
    // The same trace; nothing sent twice.
    expect(new Set(later.map((s) => s.traceId))).toEqual(traceIds);
    const ids = otlp.spans.map((s) => s.spanId);
    expect(new Set(ids).size).toBe(ids.length);
    const all = byId(otlp.spans);
    const rootAgain = later.find((s) => s.name === 'invoke_agent gatehouse')!;
    expect(rootAgain.parentSpanId).toBe('');
    expect(rootAgain.attributes).toMatchObject({ 'gatehouse.resumed': true, 'gatehouse.run.status': 'final' });
    const childAgain = later.find((s) => s.attributes['gatehouse.run.id'] === childId)!;
    expect(childAgain.attributes).toMatchObject({ 'gatehouse.resumed': true, 'gatehouse.run.status': 'final' });
    // The resumed child hangs under the delegate call's continuation, itself under the resumed root.
    const delegateAgain = all.get(childAgain.parentSpanId)!;
    expect(delegateAgain.attributes).toMatchObject({
      'gen_ai.tool.call.id': delegate.attributes['gen_ai.tool.call.id'],
      'gatehouse.resumed': true,
    });
    expect(delegateAgain.parentSpanId).toBe(rootAgain.spanId);
    // The person's grant, written by `gatehouse approve` between the two processes, is exported once.
    const bashAgain = later.find((s) => s.name === 'execute_tool bash')!;
    expect(bashAgain.parentSpanId).toBe(childAgain.spanId);
    expect(bashAgain.attributes).toMatchObject({ 'gatehouse.tool.outcome': 'ok', 'gatehouse.tool.exit_code': 0 });
    const grants = otlp.spans.filter(
      (s) => s.name === 'gatehouse.approval' && s.attributes['gatehouse.approval.request_id'] === requestId,
    );
    expect(grants.map((g) => g.attributes['gatehouse.approval.decision']).sort()).toEqual(['allow', 'pending']);
    const grant = grants.find((g) => g.attributes['gatehouse.approval.decision'] === 'allow')!;
    expect(grant.parentSpanId).toBe(bashAgain.spanId);
    expect(grant.attributes).toMatchObject({
      'gatehouse.approval.channel': 'cli',
      'gatehouse.approval.rule': 'ask[0] bash(echo ran*)',
    });
    expect(typeof grant.attributes['gatehouse.approval.approver']).toBe('string');
  }, 400_000);

  it('without the variables nothing is sent, not even to the default endpoint', async () => {
    for (const k of OTEL_VARS) delete process.env[k];
    // The SDK's default endpoint is localhost:4318: listen there when it is free, else on any port.
    const otlp = await receiver({ port: 4318 }).catch(() => receiver());
    const first = await run(repo({ 'a.txt': 'a\n' }), { turns: [{ final: 'nothing to do' }] });
    expect(first.r.status, first.why).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(otlp.connections).toBe(0);
    // And the SDK is not even loaded: the bundled CLI imports it only dynamically, when configured.
    const bundle = readFileSync(path.join(cli, '../../dist/gatehouse.mjs'), 'utf8');
    const mentions = bundle.match(/.{0,20}["']@opentelemetry\/[\w-]+["']/g) ?? [];
    expect(mentions.length).toBeGreaterThan(0);
    for (const m of mentions) expect(m).toMatch(/await import\(["']@opentelemetry/);
  }, 200_000);

  it('a collector that never answers delays the end of a run by the flush bound at most', async () => {
    const silent = await receiver({ mode: 'silent' });
    for (const k of OTEL_VARS) delete process.env[k];
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${silent.endpoint}/v1/traces`;
    process.env.GATEHOUSE_OTEL_FLUSH_MS = '1500';
    const first = await run(repo({ 'a.txt': 'a\n' }), { turns: [{ final: 'nothing to do' }] });
    const exited = Date.now();
    expect(first.r.status, first.why).toBe(0);
    await until(() => silent.connections > 0, 2000);
    expect(silent.connections).toBeGreaterThan(0); // it did try
    expect(first.r.stderr).toContain('did not take the spans within 1500 ms');
    const completed = first.parent.find((e) => e.type === 'run.completed')!;
    // run.completed, then the driver closes and telemetry waits 1.5 s at most: well under the
    // exporter's default 10 s timeout.
    expect(exited - Date.parse(completed.ts)).toBeLessThan(1500 + 5000);
  }, 200_000);
});
