import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalAnswer, Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, startDriver } from '../support/sandbox';
import { observed, pipelineFor, RAN, type PipelineHarness } from '../support/pipeline';

const types = (h: PipelineHarness) => h.eventsOf(h.lastCallId()).map((e) => e.type);
const VALIDATION_REJECTED = ['tool.intent', 'tool.validation', 'tool.observation'];

describe('tool pipeline: one intent per failure class', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  let h: PipelineHarness;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({
      runId: 'run_pipeline_fail',
      repoDir: makeRepo({ 'a.txt': 'one\ntwo\ntwo\n', 'src/app.ts': 'export const x = 1;\n' }),
    });
    h = pipelineFor(sandbox, {
      surface: [
        'read_file',
        'write_file',
        'edit_file',
        'list_files',
        'glob',
        'grep',
        'bash',
        'git_status',
        'git_diff',
        'read_artifact',
      ],
    });
  });
  afterAll(async () => driver?.close());

  function validation(callId = h.lastCallId()) {
    return h.eventsOf(callId).find((e) => e.type === 'tool.validation')!.data as {
      ok: boolean;
      stage: string;
      errors: Array<{ path: string; code: string }>;
    };
  }

  it('unknown tool: rejected at "known", lists the available tools', async () => {
    const obs = await h.call('delete_everything', {});
    expect(types(h)).toEqual(VALIDATION_REJECTED);
    expect(validation()).toMatchObject({ ok: false, stage: 'known', errors: [{ path: 'tool', code: 'unknown_tool' }] });
    expect(obs.outcome).toBe('rejected');
    expect(obs.content).toContain('there is no tool named "delete_everything"');
    expect(obs.content).toContain('available tools: read_file, write_file');
  });

  it('tool outside this run\'s surface: rejected at "surface", never executed', async () => {
    const narrow = pipelineFor(sandbox, { surface: ['read_file'] });
    const obs = await narrow.call('bash', { command: 'touch /workspace/should-not-exist' });
    expect(types(narrow)).toEqual(VALIDATION_REJECTED);
    expect((narrow.eventsOf(narrow.lastCallId())[1]!.data as { stage: string }).stage).toBe('surface');
    expect(obs.content).toContain('bash is not available in this run');
    expect(obs.content).toContain('available tools: read_file');
    const check = await h.call('bash', { command: 'ls should-not-exist 2>&1; true' });
    expect(check.content).toContain('No such file or directory');
  });

  it.each([
    ['missing field', 'read_file', {}, 'path', 'invalid_type'],
    ['wrong type', 'read_file', { path: 5 }, 'path', 'invalid_type'],
    ['unknown field', 'read_file', { path: 'a.txt', encoding: 'utf8' }, '', 'unrecognized_keys'],
    ['negative timeout', 'bash', { command: 'true', timeout: -1 }, 'timeout', 'too_small'],
    ['empty oldText', 'edit_file', { path: 'a.txt', oldText: '', newText: 'x' }, 'oldText', 'too_small'],
    ['bad artifact ref', 'read_artifact', { ref: '../../etc/passwd' }, 'ref', 'invalid_format'],
    ['input not an object', 'glob', 'src/**', '', 'invalid_type'],
  ])(
    'schema error (%s): rejected at "schema" with the field path and the expected input',
    async (_name, tool, input, field, code) => {
      const obs = await h.call(tool, input);
      expect(types(h)).toEqual(VALIDATION_REJECTED);
      const v = validation();
      expect(v.stage).toBe('schema');
      expect(v.errors[0]).toMatchObject({ path: field, code });
      expect(obs.content).toContain('invalid input');
      expect(obs.content).toContain(`expected input: ${tool} {`);
    },
  );

  it('edit before read: rejected at "semantic" with "read_file it first"', async () => {
    const obs = await h.call('edit_file', { path: 'src/app.ts', oldText: 'x = 1', newText: 'x = 2' });
    expect(types(h)).toEqual(VALIDATION_REJECTED);
    expect(validation()).toMatchObject({ stage: 'semantic', errors: [{ code: 'must_read_first' }] });
    expect(obs.content).toContain('has not been read in this run: read_file it first');
  });

  it('stale file: changed after the read, rejected with "read it again"', async () => {
    await h.call('read_file', { path: 'src/app.ts' });
    await h.call('bash', { command: 'echo "// changed behind the model" >> src/app.ts' });
    const obs = await h.call('edit_file', { path: 'src/app.ts', oldText: 'x = 1', newText: 'x = 2' });
    expect(types(h)).toEqual(VALIDATION_REJECTED);
    // The command changed the file, so the run no longer knows its content: read first again.
    expect(validation().errors[0]!.code).toMatch(/^(stale|must_read_first)$/);
    expect(obs.content).toMatch(/read_file it (again|first)/);
  });

  it('stale file: changed by something the run did not see (not through the pipeline)', async () => {
    await h.call('read_file', { path: 'a.txt' });
    await sandbox.invoke(
      'exec',
      { command: 'echo three >> a.txt' },
      {
        approval: (await import('@gatehouse/orchestrator')).runtimeApproval(
          'exec',
          { command: 'echo three >> a.txt' },
          'test',
        ),
      },
    );
    const obs = await h.call('edit_file', { path: 'a.txt', oldText: 'one', newText: 'uno' });
    expect(validation()).toMatchObject({ stage: 'semantic', errors: [{ code: 'stale' }] });
    expect(obs.content).toContain('changed since this run last read it');
  });

  it('old text not unique, and not found: rejected with the count or the hint', async () => {
    await h.call('read_file', { path: 'a.txt' });
    let obs = await h.call('edit_file', { path: 'a.txt', oldText: 'two', newText: 'dos' });
    expect(validation()).toMatchObject({
      stage: 'semantic',
      errors: [{ path: 'oldText', code: 'old_text_not_unique' }],
    });
    expect(obs.content).toContain('occurs 2 times');
    obs = await h.call('edit_file', { path: 'a.txt', oldText: 'zwei', newText: 'dos' });
    expect(validation()).toMatchObject({ errors: [{ code: 'old_text_not_found' }] });
    expect(types(h)).toEqual(VALIDATION_REJECTED);
  });

  it('write over an existing file not read in this run: rejected', async () => {
    const fresh = pipelineFor(sandbox);
    const obs = await fresh.call('write_file', { path: 'src/app.ts', content: 'clobbered' });
    expect(fresh.eventsOf(fresh.lastCallId()).map((e) => e.type)).toEqual(VALIDATION_REJECTED);
    expect(obs.content).toContain('exists and has not been read in this run');
  });

  it('denial by policy: approval event with policy id and reason, no execution', async () => {
    const ro = pipelineFor(sandbox, { mode: 'read-only', surface: ['bash'] });
    const obs = await ro.call('bash', { command: 'touch denied-file' });
    const events = ro.eventsOf(ro.lastCallId());
    expect(events.map((e) => e.type)).toEqual(['tool.intent', 'tool.validation', 'tool.approval', 'tool.observation']);
    expect(events[2]!.data).toMatchObject({
      decision: 'deny',
      policyId: 'mode:read-only',
      reason: 'the run is in read-only mode: commands do not run',
    });
    expect(events[2]!.actor).toBe('policy');
    expect(obs.outcome).toBe('denied');
    expect(obs.content).toContain('denied by policy mode:read-only');
  });

  it('an ask with no approver (headless) is not run', async () => {
    const confirm = pipelineFor(sandbox, { mode: 'confirm-each' });
    const obs = await confirm.call('write_file', { path: 'new.txt', content: 'x' });
    // The request is on record, and so is the refusal: nobody can later find an unanswered ask.
    expect(confirm.eventsOf(confirm.lastCallId()).map((e) => e.type)).toEqual([
      'tool.intent',
      'tool.validation',
      'tool.approval',
      'approval.requested',
      'approval.denied',
      'tool.observation',
    ]);
    expect(obs.content).toContain('no approver is available in this run');
  });

  it('an ask answered by an approver: the decision is on record before anything runs', async () => {
    const answers: ApprovalAnswer[] = [
      { decision: 'grant', scope: 'once', approver: 'alice@terminal', channel: 'terminal', reason: 'looks fine' },
      { decision: 'deny', approver: 'bob@ci', channel: 'nats', reason: 'not in this change' },
    ];
    const confirm = pipelineFor(sandbox, {
      mode: 'confirm-each',
      channel: { name: 'terminal', ask: async () => answers.shift()! },
    });
    const ok = await confirm.call('write_file', { path: 'approved.txt', content: 'yes' });
    let events = confirm.eventsOf(confirm.lastCallId());
    expect(events.map((e) => e.type)).toEqual([
      'tool.intent',
      'tool.validation',
      'tool.approval',
      'approval.requested',
      'approval.granted',
      'tool.execution.started',
      'tool.execution.completed',
      'tool.observation',
    ]);
    expect(events[4]!).toMatchObject({
      actor: 'user',
      data: { approver: 'alice@terminal', reason: 'looks fine', scope: 'once', channel: 'terminal' },
    });
    // The execution carries the grant, and the hash the daemon checked is the one approved.
    expect(events[5]!.data).toMatchObject({ approvalId: events[4]!.id });
    expect((events[2]!.data as { executionHash: string }).executionHash).toBe(
      (events[3]!.data as { executionHash: string }).executionHash,
    );
    expect(ok.outcome).toBe('ok');

    const declined = await confirm.call('write_file', { path: 'declined.txt', content: 'no' });
    events = confirm.eventsOf(confirm.lastCallId());
    expect(events.map((e) => e.type)).toEqual([
      'tool.intent',
      'tool.validation',
      'tool.approval',
      'approval.requested',
      'approval.denied',
      'tool.observation',
    ]);
    expect(declined.content).toContain('declined by bob@ci: not in this change');
  });

  it('a call whose run was already cancelled is not sent to the sandbox', async () => {
    const ac = new AbortController();
    ac.abort();
    const obs = observed(
      await h.pipeline.run(
        { callId: 'call_cancelled', turn: 1, tool: 'bash', input: { command: 'touch cancelled-but-ran' } },
        ac.signal,
      ),
    );
    expect(h.eventsOf('call_cancelled').map((e) => e.type)).toEqual([
      'tool.intent',
      'tool.validation',
      'tool.approval',
      'tool.observation',
    ]);
    expect(obs.content).toContain('cancelled before it ran');
    expect(
      (await h.call('bash', { command: 'test -e cancelled-but-ran && echo RAN || echo not-run' })).content,
    ).toContain('not-run');
  });

  it('tool-call arguments that were not valid JSON: rejected at "schema" with the parse error', async () => {
    const obs = observed(
      await h.pipeline.run({
        callId: 'call_badjson',
        turn: 1,
        tool: 'read_file',
        input: '{"path": "a.txt"',
        parseError: 'Unexpected end of JSON input',
      }),
    );
    expect(h.eventsOf('call_badjson').map((e) => e.type)).toEqual(VALIDATION_REJECTED);
    expect(h.eventsOf('call_badjson')[1]!.data).toMatchObject({ stage: 'schema', errors: [{ code: 'invalid_json' }] });
    expect(obs.content).toContain('the arguments are not valid JSON (Unexpected end of JSON input)');
  });

  it('a malformed call id or turn from the model does not break the pipeline', async () => {
    const obs = observed(await h.pipeline.run({ callId: '', turn: -1, tool: 'list_files', input: {} }));
    expect(obs.outcome).toBe('ok');
    expect(obs.callId).toMatch(/^call_/);
  });

  it('execution failure: ran, exit code recorded, outcome failed', async () => {
    const obs = await h.call('bash', { command: 'echo failing >&2; exit 3' });
    expect(types(h)).toEqual(RAN);
    const completed = h.eventsOf(h.lastCallId())[4]!.data as { status: string; exitCode: number };
    expect(completed).toMatchObject({ status: 'failed', exitCode: 3 });
    expect(obs.outcome).toBe('failed');
    expect(obs.content).toContain('exit code 3');
    expect(obs.content).toContain('failing');
  });

  it('timeout: ran, killed at its timeout, outcome failed with the reason', async () => {
    const obs = await h.call('bash', { command: 'sleep 30', timeout: 500 });
    expect(types(h)).toEqual(RAN);
    const started = h.eventsOf(h.lastCallId())[3]!.data as { timeoutMs: number; input: { command: string } };
    expect(started).toMatchObject({ timeoutMs: 500, input: { command: 'sleep 30' } });
    expect(h.eventsOf(h.lastCallId())[4]!.data).toMatchObject({ status: 'timeout' });
    expect(obs.content).toContain('timed out');
  });

  it('a timeout above the runtime cap is capped, and the model is told', async () => {
    const obs = await h.call('bash', { command: 'true', timeout: 10_000_000 });
    expect((h.eventsOf(h.lastCallId())[3]!.data as { timeoutMs: number }).timeoutMs).toBe(60_000);
    expect(obs.content).toContain('timeout capped at 60000 ms');
  });
});
