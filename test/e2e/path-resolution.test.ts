import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, run, sh, startDriver } from '../support/sandbox';
import { pipelineFor, policyOf, type PipelineHarness } from '../support/pipeline';

/**
 * Issue 10 (items 4 and 9): path rules are decided on the path as requested AND on where it
 * really leads (every symlink resolved), strictest wins; paths outside the workspace are refused
 * at validation, before the policy and before anything runs. Real sandbox, real daemon.
 */

const TOKEN = 'TOKEN-5f1c9e';
const POLICY = {
  deny: [
    'read_file(secrets/**)',
    'read_file(**/.env)',
    'write_file(test/**)',
    'edit_file(test/**)',
    'write_file(secrets/**)',
    'grep(secrets)',
    'list_files(secrets)',
  ],
};
const VALIDATION_REJECTED = ['tool.intent', 'tool.validation', 'tool.observation'];
const DENIED = ['tool.intent', 'tool.validation', 'tool.approval', 'tool.observation'];

const types = (h: PipelineHarness): string[] => h.eventsOf(h.lastCallId()).map((e) => e.type);
const eventOf = (h: PipelineHarness, type: string): EventEnvelope | undefined =>
  h.eventsOf(h.lastCallId()).find((e) => e.type === type);

describe('path tools decide on the requested and the resolved path', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  let h: PipelineHarness;

  beforeAll(async () => {
    driver = await startDriver();
    const repoDir = makeRepo({
      'README.md': '# fixture\n',
      '.env': `API_KEY=${TOKEN}\n`,
      'secrets/token.txt': `${TOKEN}\n`,
      'test/existing.test.ts': 'export const t = 1;\n',
      'docs/readme.txt': 'public docs\n',
      'src/a.ts': 'export const a = 1;\n',
    });
    sandbox = await driver.createSandbox({ runId: 'run_path_resolution', repoDir });
    await sh(
      sandbox,
      [
        'ln -s ../.env src/envlink',
        'ln -s ../secrets/token.txt src/tokenlink',
        'ln -s ../test src/testdir',
        'ln -s ../secrets src/secretsdir',
        'ln -s ../secrets/new.txt src/dangle',
        'ln -s /tmp/gh-nowhere src/dangle-out',
        'ln -s chain2 src/chain1 && ln -s chain3 src/chain2 && ln -s ../secrets/token.txt src/chain3',
        'ln -s /tmp tmplink',
        'ln -s ../docs/readme.txt src/doclink',
      ].join(' && '),
    );
    h = pipelineFor(sandbox, { policy: policyOf(POLICY) });
  });
  afterAll(async () => driver?.close());

  it('read_file through a link to a read-denied file is denied, naming the resolved path (break 4)', async () => {
    const obs = await h.call('read_file', { path: 'src/tokenlink' });
    expect(types(h)).toEqual(DENIED);
    expect(obs.outcome).toBe('denied');
    expect(obs.content).not.toContain(TOKEN);
    expect(obs.content).toContain('src/tokenlink resolves to secrets/token.txt');
    type Approval = { decision: string; policyId: string; resolvedFrom?: unknown };
    const approval = eventOf(h, 'tool.approval')!.data as Approval;
    expect(approval.decision).toBe('deny');
    expect(approval.policyId).toContain('read_file(secrets/**)');
    expect(approval.resolvedFrom).toEqual({ path: 'src/tokenlink', real: 'secrets/token.txt' });
    // The log records where the path led.
    expect(eventOf(h, 'tool.validation')!.data).toMatchObject({
      ok: true,
      resolved: [{ path: 'src/tokenlink', real: 'secrets/token.txt', exists: true }],
    });
  });

  it('read_file through src/envlink -> ../.env is denied by read_file(**/.env) (break 4, as reported)', async () => {
    const obs = await h.call('read_file', { path: 'src/envlink' });
    expect(types(h)).toEqual(DENIED);
    expect(obs.content).not.toContain(TOKEN);
    expect(obs.content).toContain('src/envlink resolves to .env');
  });

  it('write_file through a directory link into a write-denied directory is denied (break 4)', async () => {
    const obs = await h.call('write_file', { path: 'src/testdir/x.test.ts', content: 'owned\n' });
    expect(types(h)).toEqual(DENIED);
    expect(obs.content).toContain('src/testdir/x.test.ts resolves to test/x.test.ts');
    expect(await sh(sandbox, 'ls test')).toBe('existing.test.ts\n');
  });

  it('edit_file through a directory link into an edit-denied directory is denied, the file unchanged', async () => {
    // Reading is allowed (no read rule covers test/); the edit is what the rule forbids.
    const read = await h.call('read_file', { path: 'src/testdir/existing.test.ts' });
    expect(read.outcome).toBe('ok');
    const obs = await h.call('edit_file', { path: 'src/testdir/existing.test.ts', oldText: 't = 1', newText: 't = 2' });
    expect(types(h)).toEqual(DENIED);
    expect(obs.content).toContain('resolves to test/existing.test.ts');
    expect(await sh(sandbox, 'cat test/existing.test.ts')).toBe('export const t = 1;\n');
  });

  it('grep and list_files through a directory link into a denied directory are denied', async () => {
    let obs = await h.call('grep', { pattern: 'TOKEN', path: 'src/secretsdir' });
    expect(types(h)).toEqual(DENIED);
    expect(obs.content).not.toContain(TOKEN);
    obs = await h.call('list_files', { path: 'src/secretsdir' });
    expect(types(h)).toEqual(DENIED);
    expect(obs.content).toContain('src/secretsdir resolves to secrets');
  });

  it.each([
    // Spellings an attacker might try: the link to the root, an absolute link back into the
    // workspace, a /proc detour, doubled slashes and dots.
    ['src/root/secrets/token.txt', 'secrets/token.txt'],
    ['src/abs', 'secrets/token.txt'],
    ['src/procpath', 'secrets/token.txt'],
    ['src//secretsdir/./token.txt', 'secrets/token.txt'],
  ])('read_file %s leads to %s and is denied', async (p, real) => {
    await sh(
      sandbox,
      'test -e src/root || (ln -s .. src/root && ln -s /workspace/secrets/token.txt src/abs && ' +
        'ln -s /proc/self/root/workspace/secrets/token.txt src/procpath)',
    );
    const obs = await h.call('read_file', { path: p });
    expect(types(h)).toEqual(DENIED);
    expect(obs.content).toContain(`resolves to ${real}`);
    expect(obs.content).not.toContain(TOKEN);
  });

  it('`..` after a link is normalised before the link is followed, by the policy and the daemon alike', async () => {
    // The kernel would read secrets/token.txt (test/../secrets); gatehouse reads src/secrets/token.txt,
    // which does not exist: both the decision and the execution see the same lexical path.
    const obs = await h.call('read_file', { path: 'src/testdir/../secrets/token.txt' });
    expect(obs.content).not.toContain(TOKEN);
    const v = eventOf(h, 'tool.validation')!.data as { resolved?: Array<{ real?: string }> };
    expect(v.resolved?.[0]?.real).toBe('src/secrets/token.txt');
  });

  it('a link chain is followed to its end', async () => {
    const obs = await h.call('read_file', { path: 'src/chain1' });
    expect(types(h)).toEqual(DENIED);
    expect(obs.content).not.toContain(TOKEN);
    expect(obs.content).toContain('src/chain1 resolves to secrets/token.txt');
  });

  it('a dangling link is decided on where it points: into a denied directory, denied', async () => {
    const obs = await h.call('read_file', { path: 'src/dangle' });
    expect(types(h)).toEqual(DENIED);
    expect(obs.content).toContain('src/dangle resolves to secrets/new.txt (through a dangling symbolic link)');
    expect(eventOf(h, 'tool.validation')!.data).toMatchObject({
      resolved: [{ path: 'src/dangle', real: 'secrets/new.txt', exists: false, dangling: true }],
    });
    // Writing through it never runs (the validation read refuses a dangling link before the policy is asked).
    const write = await h.call('write_file', { path: 'src/dangle', content: 'x\n' });
    expect(types(h)).not.toContain('tool.execution.started');
    expect(write.outcome).not.toBe('ok');
    expect(await sh(sandbox, 'ls secrets')).toBe('token.txt\n');
  });

  it.each([
    ['read_file', { path: '/etc/passwd' }],
    ['read_file', { path: '../x' }],
    ['read_file', { path: 'src/../../etc/passwd' }],
    ['write_file', { path: '/tmp/gh-escape.txt', content: 'x' }],
    ['edit_file', { path: '../etc/hosts', oldText: 'a', newText: 'b' }],
    ['list_files', { path: '/' }],
    ['grep', { pattern: 'root', path: '/etc' }],
    ['git_diff', { path: '../' }],
    ['glob', { pattern: '../**/*' }],
    ['glob', { pattern: '/etc/*' }],
  ])('%s %j: rejected at validation, nothing decided or run (break 9)', async (tool, input) => {
    const obs = await h.call(tool, input);
    expect(types(h)).toEqual(VALIDATION_REJECTED);
    expect(eventOf(h, 'tool.validation')!.data).toMatchObject({
      ok: false,
      stage: 'semantic',
      errors: [{ code: 'path_outside_workspace' }],
    });
    expect(obs.outcome).toBe('rejected');
    expect(obs.content).toContain('outside the workspace');
    expect(obs.content).not.toContain('root:x:0:0');
  });

  it.each([
    ['read_file', { path: 'tmplink/x' }],
    ['list_files', { path: 'tmplink' }],
    ['write_file', { path: 'tmplink/gh-owned.txt', content: 'x' }],
    ['grep', { pattern: 'x', path: 'tmplink' }],
    ['write_file', { path: 'src/dangle-out', content: 'x' }],
  ])('%s %j: a link that leads outside the workspace is rejected at validation', async (tool, input) => {
    const obs = await h.call(tool, input);
    expect(types(h)).toEqual(VALIDATION_REJECTED);
    type Validation = { errors: Array<{ code: string; message: string }>; resolved?: unknown[] };
    const data = eventOf(h, 'tool.validation')!.data as Validation;
    expect(data.errors[0]!.code).toBe('path_outside_workspace');
    expect(data.errors[0]!.message).toContain('resolves to /tmp');
    expect(data.resolved).toEqual([expect.objectContaining({ outside: true })]);
    expect(obs.content).toContain('outside the workspace');
  });

  it('paths that resolve to themselves are decided as before; allowed reads through links work', async () => {
    let obs = await h.call('read_file', { path: 'src/a.ts' });
    expect(obs.outcome).toBe('ok');
    obs = await h.call('read_file', { path: 'src/doclink' });
    expect(obs.outcome).toBe('ok');
    expect(obs.content).toContain('public docs');
    // The invocation carried the path the policy decided on.
    const started = eventOf(h, 'tool.approval')!.data as { reason: string };
    expect(started.reason).toBeTruthy();
    obs = await h.call('write_file', { path: 'src/new-file.ts', content: 'export {};\n' });
    expect(obs.outcome).toBe('ok');
  });

  it('the daemon refuses a call whose path no longer resolves where the policy decided (swap race)', async () => {
    await sh(sandbox, 'ln -s ../docs src/swapdir && ln -s ../docs/readme.txt src/swapfile');
    const resolved = await run(sandbox, 'resolve', { paths: ['src/swapfile', 'src/swapdir/new.txt'] });
    expect(resolved.status).toBe('ok');
    expect(resolved.data).toMatchObject({
      kind: 'resolve',
      paths: [
        { path: 'src/swapfile', real: 'docs/readme.txt' },
        { path: 'src/swapdir/new.txt', real: 'docs/new.txt' },
      ],
    });
    // Between the decision and the execution, something swaps the links (a command in the sandbox).
    await sh(sandbox, 'ln -sfn ../secrets/token.txt src/swapfile && rm src/swapdir && ln -s ../test src/swapdir');
    const read = await run(sandbox, 'read_file', { path: 'src/swapfile', expectReal: 'docs/readme.txt' });
    expect(read).toMatchObject({ status: 'rejected', error: { code: 'path_changed' } });
    expect(read.error!.message).toContain('secrets/token.txt');
    expect(read.output).not.toContain(TOKEN);
    const swapped = { path: 'src/swapdir/new.txt', content: 'owned\n', expectReal: 'docs/new.txt' };
    const write = await run(sandbox, 'write_file', swapped);
    expect(write).toMatchObject({ status: 'rejected', error: { code: 'path_changed' } });
    expect(await sh(sandbox, 'ls test')).toBe('existing.test.ts\n');
    const list = await run(sandbox, 'list', { path: 'src/swapdir', expectReal: 'docs' });
    expect(list).toMatchObject({ status: 'rejected', error: { code: 'path_changed' } });
    const grep = await run(sandbox, 'grep', { pattern: 'TOKEN', path: 'src/swapfile', expectReal: 'docs/readme.txt' });
    expect(grep).toMatchObject({ status: 'rejected', error: { code: 'path_changed' } });
    // With the right expectation, the same calls run.
    const ok = await run(sandbox, 'read_file', { path: 'src/doclink', expectReal: 'docs/readme.txt' });
    expect(ok.status).toBe('ok');
  });

  it('resolve reports existence, dangling links, loops and paths outside without failing the batch', async () => {
    await sh(sandbox, 'ln -s loop-b loop-a && ln -s loop-a loop-b');
    const paths = ['src/a.ts', 'src/missing/deep.txt', 'src/dangle', 'tmplink/x', 'loop-a', '../etc'];
    const r = await run(sandbox, 'resolve', { paths });
    expect(r.status).toBe('ok');
    expect(r.data).toMatchObject({
      kind: 'resolve',
      paths: [
        { path: 'src/a.ts', real: 'src/a.ts', exists: true, outside: false },
        { path: 'src/missing/deep.txt', real: 'src/missing/deep.txt', exists: false, outside: false },
        { path: 'src/dangle', real: 'secrets/new.txt', exists: false, outside: false },
        { path: 'tmplink/x', real: '/tmp/x', exists: false, outside: true },
        { path: 'loop-a', error: 'a symbolic link loop' },
        { path: '../etc', real: '/etc', outside: true },
      ],
    });
  });
});
