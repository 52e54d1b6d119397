import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { execute } from '../../src/tools/pipeline/execute';
import { observe } from '../../src/tools/pipeline/observe';
import { ToolRegistry } from '../../src/tools/registry';
import { defineTool, type ExecutionPlan } from '../../src/tools/tool';
import { readFile } from '../../src/tools/builtin/read-file';
import { harness, observed, RAN } from './pipeline-harness';

const completed = (h: ReturnType<typeof harness>) =>
  h.event<{ status: string; exitCode: number | null; filesChanged: string[]; artifactRefs: string[] }>(
    'tool.execution.completed',
  );

describe('execute phase', () => {
  it('executed, ok: started then completed, the workspace changed, the observation says so', async () => {
    const h = harness({ sandbox: { files: { 'a.txt': 'one\n' } } });
    const obs = await h.call('write_file', { path: 'src/new.ts', content: 'export {};\n' });
    expect(h.types()).toEqual(RAN);
    expect(obs.outcome).toBe('ok');
    expect(h.sandbox.workspace.files.get('src/new.ts')).toBe('export {};\n');
    expect(completed(h)).toMatchObject({ status: 'ok', filesChanged: ['src/new.ts'] });
    const approval = h.eventsOf().find((e) => e.type === 'tool.approval')!;
    expect(h.event('tool.execution.started')).toMatchObject({ approvalId: approval.id, primitive: 'write_file' });
    expect(h.sandbox.executed()).toMatchObject([
      { primitive: 'write_file', approval: { id: approval.id, by: 'policy' } },
    ]);
  });

  it('executed, failed: a command that exits 1 is a failed observation with the exit code', async () => {
    const h = harness({ sandbox: { exec: () => ({ exitCode: 1, output: 'boom\n' }) } });
    const obs = await h.call('bash', { command: 'make test' });
    expect(h.types()).toEqual(RAN);
    expect(completed(h)).toMatchObject({ status: 'failed', exitCode: 1 });
    expect(obs.outcome).toBe('failed');
    expect(obs.content).toContain('exit code 1');
    expect(obs.content).toContain('boom');
  });

  it('lost: the sandbox never answered, recorded as lost, shown as failed', async () => {
    const h = harness();
    h.sandbox.loseNext('exec', 'connection reset');
    const obs = await h.call('bash', { command: 'true' });
    expect(h.types()).toEqual(RAN);
    expect(completed(h).status).toBe('lost');
    expect(obs.outcome).toBe('failed');
    expect(h.event('tool.execution.completed')).toMatchObject({
      error: { code: 'internal', message: 'the sandbox did not return a result: connection reset' },
    });
    // bash shows only that there was no exit code (its observe does not show the error).
    expect(obs.content).toContain('exit code none');
  });

  it('cancelled before it ran: no execution events, one failed observation', async () => {
    const h = harness();
    const stop = new AbortController();
    stop.abort();
    const obs = observed(
      await h.pipeline.run({ callId: 'c1', turn: 1, tool: 'bash', input: { command: 'true' } }, stop.signal),
    );
    expect(h.types('c1')).toEqual(['tool.intent', 'tool.validation', 'tool.approval', 'tool.observation']);
    expect(obs.content).toContain('cancelled before it ran');
    expect(h.sandbox.executed()).toEqual([]);
  });

  it('what will run is durable before a change; a read skips the fsync', async () => {
    const h = harness({ sandbox: { files: { 'a.txt': 'one\n' } } });
    await h.call('read_file', { path: 'a.txt' });
    expect(h.log.syncs).toEqual([]);
    await h.call('write_file', { path: 'b.txt', content: 'two\n' });
    const started = h.eventsOf().find((e) => e.type === 'tool.execution.started')!;
    expect(h.log.syncs).toEqual([started.seq + 1]);
  });

  it('the phase on its own: ran, with the raw result and the started event it completes', async () => {
    const h = harness({ sandbox: { files: { 'a.txt': 'one\n' } } });
    const plan: ExecutionPlan = {
      executor: 'sandbox',
      primitive: 'read_file',
      input: { path: 'a.txt' },
      timeoutMs: 1000,
    };
    const { actionHash } = await import('@gatehouse/shared');
    const grant = {
      eventId: 'evt-test',
      executionHash: actionHash({ name: 'read_file', input: plan.input }),
      by: 'policy' as const,
    };
    const ran = await execute(h.deps, { callId: 'c1', tool: readFile, input: { path: 'a.txt' } }, plan, grant);
    expect(ran.kind).toBe('ran');
    if (ran.kind !== 'ran') return;
    expect(ran.raw).toMatchObject({ executor: 'sandbox', result: { status: 'ok', output: 'one\n' } });
    expect(ran.startedId).toBe(h.eventsOf('c1')[0]!.id);
    // A grant for some other action is refused by the sandbox, as the daemon refuses it.
    const wrong = await execute(h.deps, { callId: 'c2', tool: readFile, input: {} }, plan, {
      ...grant,
      executionHash: actionHash({ name: 'read_file', input: { path: 'b.txt' } }),
    });
    expect(wrong).toMatchObject({
      kind: 'ran',
      raw: { result: { status: 'rejected', error: { code: 'approval_mismatch' } } },
    });
  });
});

describe('observe phase', () => {
  it('bounded: a large output is cut to the budget, kept whole as an artifact, and the ref is shown', async () => {
    const big = Array.from({ length: 2000 }, (_, i) => `line ${i}`).join('\n');
    const h = harness({ sandbox: { exec: () => ({ output: big }) }, limits: { observationBudget: 1000 } });
    const obs = await h.call('bash', { command: 'seq 2000' });
    expect(obs.truncated).toBe(true);
    expect(obs.artifactRef).toMatch(/\S/);
    expect(obs.content.length).toBeLessThan(1000 + 600);
    expect(obs.content).toContain('line 0');
    expect(obs.content).toContain('line 1999');
    expect(obs.content).toContain(obs.artifactRef!);
    expect(completed(h).artifactRefs).toEqual([obs.artifactRef]);
    const stored = h.log.artifacts.read(obs.artifactRef!, 0, 1_000_000);
    expect(stored.text).toContain('line 1000');
    expect(stored.eof).toBe(true);
  });

  it('small output: shown whole, nothing stored', async () => {
    const h = harness({ sandbox: { exec: () => ({ output: 'short\n' }) } });
    const obs = await h.call('bash', { command: 'echo short' });
    expect(obs).toMatchObject({ truncated: false, outcome: 'ok' });
    expect(obs.artifactRef).toBeUndefined();
    expect(completed(h).artifactRefs).toEqual([]);
  });

  it('a secret in the output is redacted before the model sees it', async () => {
    const secret = 'hunter2-but-much-longer-0123456789';
    const h = harness({ sandbox: { exec: () => ({ output: `token=${secret}\n` }) } });
    const { TestLog } = await import('../../src/testing/index');
    const withSecret = new TestLog({ secrets: [secret] });
    try {
      h.deps.log = withSecret;
      h.tracker.apply(
        withSecret.append('run.started', 'user', { task: 't', mode: 'sandboxed-auto', surface: ['bash'] }),
      );
      const obs = observed(await h.pipeline.run({ callId: 'c1', turn: 1, tool: 'bash', input: { command: 'env' } }));
      expect(obs.content).not.toContain(secret);
      expect(JSON.stringify(withSecret.events())).not.toContain(secret);
    } finally {
      withSecret.dispose();
    }
  });

  it('a sub-agent waiting for approval: pending, with no completion and no observation', () => {
    const h = harness();
    const plan: ExecutionPlan = {
      executor: 'orchestrator',
      primitive: 'delegate',
      input: {},
      timeoutMs: 1000,
      run: async () => ({ ok: true, output: '' }),
    };
    const result = observe(h.deps, { callId: 'c1', tool: readFile, input: {} }, plan, {
      invocationId: 'inv-1',
      startedId: 'evt-1',
      raw: {
        executor: 'orchestrator',
        result: { ok: false, output: '', pending: { runId: 'run-child', requestId: 'apr-1' } },
      },
      durationMs: 1,
    });
    expect(result).toEqual({ kind: 'pending', callId: 'c1', tool: 'read_file', requestId: 'apr-1' });
    expect(h.eventsOf('c1')).toEqual([]);
  });

  it('a tool that cannot read its result still ends in one failed observation', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'observes badly',
      input: z.strictObject({}),
      sideEffect: 'read',
      isReadOnly: () => true,
      plan: () => ({ executor: 'sandbox', primitive: 'list', input: {}, timeoutMs: 1000 }),
      observe: () => {
        throw new Error('unexpected shape');
      },
    });
    const h = harness({ registry: new ToolRegistry([broken as never]), surface: ['broken'] });
    const obs = await h.call('broken', {});
    expect(h.types()).toEqual(RAN);
    expect(obs.outcome).toBe('failed');
    expect(obs.content).toContain('the result could not be read: unexpected shape');
  });
});
