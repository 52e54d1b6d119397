import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  actionHash,
  isEvent,
  type InvocationResult,
  type PathResolution,
  type PrimitiveInput,
  type PrimitiveName,
  type ResultData,
} from '@gatehouse/shared';
import { compilePolicy, createPolicy, loadShellClassifier, type Mode } from '../../src/policy/index';
import type { ApprovalAnswer, ApprovalChannel } from '../../src/approval/channels/types';
import { RunLog } from '../../src/events/index';
import { StateTracker } from '../../src/events/state';
import { ToolPipeline } from '../../src/tools/pipeline';
import { codingTools } from '../../src/tools/builtin/index';
import type { SandboxPort } from '../../src/tools/ports';
import { boundInput, decideOnPaths } from '../../src/tools/path-decision';
import { escapesWorkspace, outsideErrors, type ResolvedRef } from '../../src/tools/workspace-paths';

// Logs may be anchored with a per-installation key: keep this file's own.
process.env.GATEHOUSE_KEY_FILE ??= path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-paths-key-')), 'log.key');

const classifier = await loadShellClassifier();
const policyOf = (file: unknown, mode: Mode = 'sandboxed-auto') =>
  createPolicy(compilePolicy(file, 'test.json', classifier), mode, classifier);
const POLICY = {
  deny: ['read_file(secrets/**)', 'read_file(**/.env)', 'write_file(test/**)'],
  ask: ['read_file(docs/private/**)'],
};

const ref = (p: string, real: string, extra: Partial<ResolvedRef> = {}): ResolvedRef => ({
  field: 'path',
  path: p,
  key: p.replace(/^\.\//, ''),
  real,
  exists: true,
  outside: false,
  ...extra,
});

describe('decideOnPaths: the strictest of the requested and the resolved form', () => {
  const policy = policyOf(POLICY);
  const read = (input: unknown) => policy.decide({ tool: 'read_file', input, readOnly: true, sideEffect: 'read' });

  it('a link to a denied file is denied, and the reason names the form that matched', () => {
    const d = decideOnPaths(read, { path: 'src/envlink' }, [ref('src/envlink', '.env')]);
    expect(d.decision.decision).toBe('deny');
    expect(d.decision.reason).toBe('src/envlink resolves to .env: read_file .env matches deny rule read_file(**/.env)');
    expect(d.resolvedFrom).toEqual({ path: 'src/envlink', real: '.env' });
  });

  it('the requested form stays decisive when it is as strict or stricter', () => {
    const denied = decideOnPaths(read, { path: 'secrets/a' }, [ref('secrets/a', 'docs/a')]);
    expect(denied.decision.decision).toBe('deny');
    expect(denied.decision.reason).not.toContain('resolves to');
    expect(denied.resolvedFrom).toBeUndefined();
    const tie = decideOnPaths(read, { path: 'src/a' }, [ref('src/a', 'docs/a')]);
    expect(tie.decision.decision).toBe('allow');
    expect(tie.decision.reason).not.toContain('resolves');
  });

  it('ask beats allow, deny beats ask, across several links', () => {
    const asked = decideOnPaths(read, { path: 'l' }, [ref('l', 'docs/private/x')]);
    expect(asked.decision.decision).toBe('ask');
    expect(asked.decision.reason).toContain('l resolves to docs/private/x');
    const write = (input: unknown) =>
      policy.decide({ tool: 'write_file', input, readOnly: false, sideEffect: 'write' });
    const denied = decideOnPaths(write, { path: 'src/testdir/x' }, [ref('src/testdir/x', 'test/x')]);
    expect(denied.decision.decision).toBe('deny');
    expect(denied.decision.risk).toEqual(expect.arrayContaining(['write: src/testdir/x', 'write: test/x']));
  });

  it('a dangling link says so; unresolved, outside and unmoved paths decide nothing extra', () => {
    const d = decideOnPaths(read, { path: 'src/d' }, [ref('src/d', 'secrets/new', { exists: false, dangling: true })]);
    expect(d.decision.reason).toContain('src/d resolves to secrets/new (through a dangling symbolic link)');
    let calls = 0;
    const counting = (input: unknown) => {
      calls++;
      return read(input);
    };
    const r = decideOnPaths(counting, { path: 'a' }, [
      ref('a', 'a'),
      { field: 'path', path: 'b', key: 'b', exists: false, outside: false, error: 'a symbolic link loop' },
      ref('c', '/tmp/c', { outside: true }),
    ]);
    expect(calls).toBe(1);
    expect(r.resolvedFrom).toBeUndefined();
  });
});

describe('workspace containment as written', () => {
  it.each([
    ['/etc/passwd', true],
    ['../x', true],
    ['src/../../x', true],
    ['/workspace/../etc', true],
    ['/workspace2/a', true],
    ['..', true],
    ['*/../../x', true],
    ['/workspace', false],
    ['/workspace/src/a.ts', false],
    ['src/../a.ts', false],
    ['./a', false],
    ['..foo', false],
    ['**/..', false],
    ['%2e%2e/x', false],
  ])('%s escapes: %s', (p, escapes) => {
    expect(escapesWorkspace(p)).toBe(escapes);
  });

  it('an escape is a validation error on the field, saying what to do', () => {
    expect(outsideErrors([{ field: 'path', path: '/etc/passwd', resolve: true }])).toEqual([
      {
        path: 'path',
        code: 'path_outside_workspace',
        message:
          '/etc/passwd is outside the workspace; use a path inside /workspace (relative paths are relative to it)',
      },
    ]);
  });

  it('an approval binds the resolution only when a path leads elsewhere', () => {
    expect(boundInput({ path: 'a' }, [ref('a', 'a')])).toEqual({ path: 'a' });
    const bound = { input: { path: 'l' }, resolved: [{ path: 'l', real: 'b' }] };
    expect(boundInput({ path: 'l' }, [ref('l', 'b')])).toEqual(bound);
  });
});

/** A sandbox double: answers `resolve` from a table that a test may change, records every invocation. */
class FakeSandbox implements SandboxPort {
  readonly sandboxId = 'sbx_fake';
  readonly calls: Array<{ primitive: PrimitiveName; input: unknown; actionHash: string }> = [];
  links: Record<string, Partial<PathResolution>> = {};
  resolveFails = false;

  invoke<P extends PrimitiveName>(
    primitive: P,
    input: PrimitiveInput<P>,
    opts: { approval: { actionHash: string } },
  ): Promise<InvocationResult> {
    this.calls.push({ primitive, input, actionHash: opts.approval.actionHash });
    if (primitive === 'resolve') {
      if (this.resolveFails) return Promise.resolve(this.failed('io_error', 'disk on fire'));
      const paths = (input as PrimitiveInput<'resolve'>).paths.map((p) => ({
        path: p,
        real: p,
        exists: true,
        outside: false,
        ...this.links[p],
      }));
      return Promise.resolve(this.result('ok', '', { kind: 'resolve', paths }));
    }
    if (primitive === 'read_file') {
      if (this.links[(input as { path: string }).path]?.exists === false) {
        return Promise.resolve(this.failed('not_found', 'no such file'));
      }
      const sha256 = 'a'.repeat(64);
      const data: ResultData = { kind: 'read_file', sha256, totalBytes: 3, totalLines: 1, startLine: 1, endLine: 1 };
      return Promise.resolve(this.result('ok', 'hi\n', data));
    }
    if (primitive === 'write_file') {
      return Promise.resolve(this.result('ok', 'wrote', { kind: 'write_file', sha256: 'b'.repeat(64), created: true }));
    }
    return Promise.resolve(this.failed('not_found', 'nothing here'));
  }

  executed(): string[] {
    return this.calls.map((c) => c.primitive);
  }

  private failed(code: NonNullable<InvocationResult['error']>['code'], message: string): InvocationResult {
    return this.result('failed', '', undefined, { code, message });
  }

  private result(
    status: InvocationResult['status'],
    output: string,
    data?: ResultData,
    error?: InvocationResult['error'],
  ): InvocationResult {
    return {
      v: 1,
      invocationId: 'inv_x',
      runId: 'run_x',
      sandboxId: this.sandboxId,
      status,
      exitCode: null,
      signal: null,
      output,
      bytes: output.length,
      truncated: false,
      durationMs: 1,
      filesChanged: [],
      replayed: false,
      ...(data ? { data } : {}),
      ...(error ? { error } : {}),
    };
  }
}

function harness(opts: { mode?: Mode; answers?: ApprovalAnswer[] } = {}) {
  const sandbox = new FakeSandbox();
  const log = RunLog.create(mkdtempSync(path.join(os.tmpdir(), 'gh-paths-')), 'run_paths_unit');
  const tracker = new StateTracker();
  const registry = codingTools();
  const surface = registry.names();
  tracker.apply(log.append('run.started', 'user', { task: 'test', mode: opts.mode ?? 'sandboxed-auto', surface }));
  const answers = opts.answers ?? [];
  let asked = 0;
  const channel: ApprovalChannel = {
    name: 'terminal',
    ask: () => {
      asked++;
      return Promise.resolve(answers.shift() ?? { decision: 'deny', approver: 'x', channel: 'terminal', reason: 'no' });
    },
  };
  const limits = { defaultTimeoutMs: 1000, maxTimeoutMs: 1000, observationBudget: 4000, maxReadLines: 100 };
  const policy = policyOf(POLICY, opts.mode);
  const pipeline = new ToolPipeline({ log, tracker, registry, surface, policy, sandbox, limits, channel });
  let n = 0;
  const call = async (tool: string, input: unknown) => {
    const result = await pipeline.run({ callId: `call_${++n}`, turn: 1, tool, input });
    if (result.kind === 'pending') throw new Error(`call_${n} waits for approval ${result.requestId}`);
    return result.observation;
  };
  const events = () => log.events().filter((e) => 'callId' in e.data && e.data.callId === `call_${n}`);
  return { sandbox, call, events, asked: () => asked };
}

describe('pipeline: path stage against a sandbox double', () => {
  it('a path outside the workspace is rejected before the sandbox is asked anything', async () => {
    const h = harness();
    const calls = [
      ['read_file', { path: '/etc/passwd' }],
      ['grep', { pattern: 'x', path: '../' }],
      ['glob', { pattern: '/etc/*' }],
    ] as const;
    for (const [tool, input] of calls) {
      const obs = await h.call(tool, input);
      expect(obs.outcome).toBe('rejected');
      expect(h.events().map((e) => e.type)).toEqual(['tool.intent', 'tool.validation', 'tool.observation']);
    }
    expect(h.sandbox.calls).toEqual([]);
  });

  it('a link to a denied file: one resolve, then denied; the log has the resolution and what matched', async () => {
    const h = harness();
    h.sandbox.links['src/envlink'] = { real: '.env' };
    const obs = await h.call('read_file', { path: 'src/envlink' });
    expect(obs.outcome).toBe('denied');
    expect(obs.content).toContain('src/envlink resolves to .env: read_file .env matches deny rule read_file(**/.env)');
    expect(h.sandbox.executed()).toEqual(['resolve']);
    const [, validation, approval] = h.events();
    expect(validation!.data).toMatchObject({
      ok: true,
      resolved: [{ path: 'src/envlink', real: '.env', exists: true, outside: false }],
    });
    expect(approval!.data).toMatchObject({ decision: 'deny', resolvedFrom: { path: 'src/envlink', real: '.env' } });
  });

  it('an allowed call carries the resolved path it was decided on, inside the approved hash', async () => {
    const h = harness();
    h.sandbox.links['src/doclink'] = { real: 'docs/readme.txt' };
    const obs = await h.call('read_file', { path: 'src/doclink' });
    expect(obs.outcome).toBe('ok');
    const read = h.sandbox.calls.find((c) => c.primitive === 'read_file')!;
    expect(read.input).toEqual({ path: 'src/doclink', limit: 100, expectReal: 'docs/readme.txt' });
    const approval = h.events().find((e) => isEvent(e, 'tool.approval'))!.data;
    expect(approval.executionHash).toBe(actionHash({ name: 'read_file', input: read.input }));
    expect(read.actionHash).toBe(approval.executionHash);
  });

  it('resolving outside, or failing to resolve, is a validation failure and nothing runs', async () => {
    const h = harness();
    h.sandbox.links['tmplink/x'] = { real: '/tmp/x', outside: true, exists: false };
    let obs = await h.call('read_file', { path: 'tmplink/x' });
    expect(obs.content).toContain('tmplink/x resolves to /tmp/x, outside the workspace');
    h.sandbox.resolveFails = true;
    obs = await h.call('read_file', { path: 'src/a.ts' });
    expect(obs.outcome).toBe('rejected');
    expect(obs.content).toContain('could not check where the path leads');
    expect(h.sandbox.executed()).toEqual(['resolve', 'resolve']);
  });

  it('a run-scoped grant does not follow a link that now points elsewhere', async () => {
    const grant: ApprovalAnswer = { decision: 'grant', scope: 'run', approver: 'alice', channel: 'terminal' };
    const h = harness({ mode: 'confirm-each', answers: [grant, grant] });
    h.sandbox.links['src/lnk/x.txt'] = { real: 'a/x.txt', exists: false };
    expect((await h.call('write_file', { path: 'src/lnk/x.txt', content: 'x' })).outcome).toBe('ok');
    expect(h.asked()).toBe(1);
    // Same call, same link target: the standing grant holds.
    expect((await h.call('write_file', { path: 'src/lnk/x.txt', content: 'x' })).outcome).toBe('ok');
    expect(h.asked()).toBe(1);
    // The link now leads elsewhere: a person is asked again.
    h.sandbox.links['src/lnk/x.txt'] = { real: 'b/x.txt', exists: false };
    expect((await h.call('write_file', { path: 'src/lnk/x.txt', content: 'x' })).outcome).toBe('ok');
    expect(h.asked()).toBe(2);
    const writes = h.sandbox.calls.filter((c) => c.primitive === 'write_file');
    const written = writes.map((c) => (c.input as { expectReal?: string }).expectReal);
    expect(written).toEqual(['a/x.txt', 'a/x.txt', 'b/x.txt']);
  });
});
