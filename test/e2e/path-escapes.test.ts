import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type ErrorCode, type InvocationResult, type PrimitiveName } from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { invocation, makeRepo, run, sendRaw, sh, startDriver, rootExec } from '../support/sandbox';

/**
 * Path-escape attempts sent straight to the daemon over NATS (bypassing the client), through every
 * primitive that takes a path. The container is the real boundary; these check the daemon's own
 * second line: nothing outside /workspace is read, listed, searched, written or used as a cwd.
 */

/** Something from outside the workspace that must never come back in a result. */
const FOREIGN_MARKERS = [
  'root:x:0:0',
  'daemon:x:1:1',
  '/usr/sbin/nologin',
  'GATEHOUSE_NATS',
  'GATEHOUSE_RUN_ID',
  'localhost',
];

/** Files the write attempts below would create if they got out; checked after the table. */
const ESCAPE_FILES = [
  '/escape.txt',
  '/tmp/gh-escape-abs.txt',
  '/tmp/owned.txt',
  '/tmp/dangling-target',
  '/tmp/gh-escape-ws.txt',
  '/tmp/gh-chain.txt',
  '/tmp/gh-nul.txt',
  '/tmp/gh-cwd-escape',
  '/gh-cwd-escape',
  '/etc/gh-up.txt',
  '/etc/gh-cwd-escape',
];

const ZERO_SHA = '0'.repeat(64);

type Expect =
  /** A genuine escape: refused by the workspace boundary with this code. */
  | { code: Extract<ErrorCode, 'path_outside_workspace' | 'invalid_path'> }
  /**
   * A look-alike that is, to the kernel, just an odd file name inside /workspace (`‥`, `%2e%2e`,
   * `~`, a backslash): nothing exists there, so `not_found` is the honest answer.
   */
  | { code: 'not_found' }
  /** Refused by the wire schema before the path is even looked at. */
  | { code: 'invalid_message'; field: string };

interface Case {
  name: string;
  primitive: PrimitiveName;
  input: Record<string, unknown>;
  expect: Expect;
}

const OUT = { code: 'path_outside_workspace' } as const;
const INVALID = { code: 'invalid_path' } as const;
const NOT_FOUND = { code: 'not_found' } as const;

const read = (path: string, expect: Expect = OUT): Case => ({
  name: `read_file ${show(path)}`,
  primitive: 'read_file',
  input: { path },
  expect,
});
const write = (path: string, expect: Expect = OUT): Case => ({
  name: `write_file ${show(path)}`,
  primitive: 'write_file',
  input: { path, content: 'owned\n' },
  expect,
});
const edit = (path: string, expect: Expect = OUT): Case => ({
  name: `edit_file ${show(path)}`,
  primitive: 'edit_file',
  input: { path, oldText: 'root', newText: 'owned', expectedSha256: ZERO_SHA },
  expect,
});
const list = (path: string, expect: Expect = OUT): Case => ({
  name: `list ${show(path)}`,
  primitive: 'list',
  input: { path, recursive: true },
  expect,
});
const glob = (path: string, expect: Expect = OUT): Case => ({
  name: `glob in ${show(path)}`,
  primitive: 'glob',
  input: { pattern: '**/*', path },
  expect,
});
const grep = (path: string, expect: Expect = OUT): Case => ({
  name: `grep in ${show(path)}`,
  primitive: 'grep',
  input: { pattern: 'root|GATEHOUSE|[0-9a-f]{40}', path },
  expect,
});
const execIn = (cwd: string, expect: Expect = OUT): Case => ({
  name: `exec cwd ${show(cwd)}`,
  primitive: 'exec',
  input: { command: 'touch gh-cwd-escape; pwd; cat passwd 2>/dev/null; ls', cwd },
  expect,
});

function show(p: string): string {
  const clean = p.replace(/\0/g, '\\0');
  return clean.length > 60 ? `${clean.slice(0, 24)}…(${p.length} chars)` : clean;
}

const CASES: Case[] = [
  // `..` in its various spellings
  read('../etc/passwd'),
  read('a/../../etc/passwd'),
  read('./../etc/passwd'),
  read('../../../../../../../../etc/passwd'),
  read('src/../../etc/passwd'),
  read('/workspace/../etc/passwd'),
  // absolute paths outside
  read('/etc/passwd'),
  read('/etc/shadow'),
  read('/proc/self/environ'),
  read('/proc/1/environ'),
  read('/proc/self/root/etc/passwd'),
  read('/var/gatehouse/baseline.git/HEAD'),
  read('/opt/gatehouse/agent.mjs'),
  // symlinks made inside the workspace (see beforeAll)
  read('etc-link/passwd'),
  read('passwd-link'),
  read('link1/passwd'),
  read('up/passwd'),
  // NUL bytes and length
  read('src/a.ts\u0000../../etc/passwd', INVALID),
  read(`${'a'.repeat(300)}/passwd`, INVALID),
  read(`${'../'.repeat(1362)}etc/passwd`), // 4096 characters, the longest the schema allows
  // 5002 characters: over MAX_PATH_LENGTH, so the wire schema refuses it before any path logic runs.
  read(`${'../'.repeat(1664)}etc/passwd`, { code: 'invalid_message', field: 'input.path' }),
  // look-alikes: odd names inside the workspace, not escapes
  read('\u2024\u2024/etc/passwd', NOT_FOUND),
  read('\uff0e\uff0e\uff0fetc\uff0fpasswd', NOT_FOUND),
  read('%2e%2e/etc/passwd', NOT_FOUND),
  read('%2e%2e%2f%2e%2e%2fetc%2fpasswd', NOT_FOUND),
  read('..\\..\\etc\\passwd', NOT_FOUND),
  read('....//etc/passwd', NOT_FOUND),
  read('~/.bashrc', NOT_FOUND),
  read('~root', NOT_FOUND),

  write('../escape.txt'),
  write('/tmp/gh-escape-abs.txt'),
  write('/workspace/../../tmp/gh-escape-ws.txt'),
  write('tmp-link/owned.txt'),
  write('link1/../../tmp/gh-chain.txt'),
  write('tmp-chain/gh-chain.txt'),
  write('dangle', INVALID),
  write('dangle/sub.txt', INVALID),
  write('etc-link/passwd'),
  write('up/gh-up.txt'),
  write('src/a.ts\u0000../../../tmp/gh-nul.txt', INVALID),
  write(`src/${'b'.repeat(300)}.ts`, INVALID),

  edit('../etc/passwd'),
  edit('/etc/hosts'),
  edit('passwd-link'),
  edit('etc-link/passwd'),
  edit('\u2024\u2024/etc/passwd', NOT_FOUND),

  list('/'),
  list('/tmp'),
  list('..'),
  list('/workspace/../../'),
  list('src/../../'),
  list('etc-link'),
  list('up'),
  list('%2e%2e', NOT_FOUND),

  glob('/etc'),
  glob('../'),
  glob('link1'),
  glob('/var/gatehouse'),
  glob('%2e%2e', NOT_FOUND),

  grep('/etc/passwd'),
  grep('etc-link'),
  grep('/proc/self/environ'),
  grep('/var/gatehouse'),
  grep('../..'),
  grep('~', NOT_FOUND),
  // 4087 characters, all inside, but over PATH_MAX once joined to /workspace/: unusable, refused.
  read(`${'a/'.repeat(2043)}b`, INVALID),

  execIn('/tmp'),
  execIn('..'),
  execIn('/'),
  execIn('etc-link'),
  execIn('up'),
  execIn('tmp-link'),
  execIn('\u2024\u2024', NOT_FOUND),
  execIn('dangle', INVALID),
];

describe('path escapes sent straight to the daemon', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  let tmpBefore: string;
  let baselineTree: string;
  let repoDir: string;

  beforeAll(async () => {
    driver = await startDriver();
    repoDir = makeRepo();
    sandbox = await driver.createSandbox({ runId: newId('run'), repoDir });
    await sh(
      sandbox,
      [
        'ln -s /etc etc-link',
        'ln -s /etc/passwd passwd-link',
        'ln -s /tmp tmp-link',
        'ln -s link2 link1 && ln -s /etc link2',
        'ln -s tmp-link tmp-chain',
        'ln -s /tmp/dangling-target dangle',
        'ln -s ../../etc up',
      ].join(' && '),
    );
    // The setup really points outside: otherwise every refusal below would prove nothing.
    expect(await sh(sandbox, 'head -c 10 etc-link/passwd; readlink -f link1 up tmp-chain')).toBe(
      'root:x:0:0/etc\n/etc\n/tmp\n',
    );
    tmpBefore = await sh(sandbox, 'ls -A /tmp /');
    // Content of a file in the daemon's private state directory, to recognise it if it leaked.
    // Commands cannot read it (it is root's); the test reads it around the daemon.
    baselineTree = (await rootExec(driver, sandbox, ['cat', '/var/gatehouse/baseline.git/HEAD'])).output.trim();
    expect(baselineTree).toMatch(/^ref: refs\/heads\//);
  });
  afterAll(async () => {
    await driver?.close();
    if (repoDir) rmSync(repoDir, { recursive: true, force: true });
  });

  it('has at least 35 cases, through every path-taking primitive', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(35);
    expect(new Set(CASES.map((c) => c.primitive))).toEqual(
      new Set(['read_file', 'write_file', 'edit_file', 'list', 'glob', 'grep', 'exec']),
    );
  });

  it.each(CASES)('$name', async ({ primitive, input, expect: want }) => {
    const result: InvocationResult = await sendRaw(driver, sandbox, invocation(sandbox, primitive, input));
    const serialized = JSON.stringify(result);
    for (const marker of [...FOREIGN_MARKERS, baselineTree]) expect(serialized).not.toContain(marker);

    expect(result.status).not.toBe('ok');
    expect(['rejected', 'failed']).toContain(result.status);
    expect(result.data).toBeUndefined();
    expect(result.filesChanged).toEqual([]);
    expect(result.error?.code).toBe(want.code);
    if (want.code === 'invalid_message') {
      expect(result.status).toBe('rejected');
      expect(result.error?.path).toBe(want.field);
    } else if (want.code === 'not_found') {
      expect(result.status).toBe('failed');
    } else {
      // Refused before acting, and the offending path is echoed back, printable.
      expect(result.status).toBe('rejected');
      expect(result.error?.path).toBeDefined();
      expect(result.error?.path).not.toContain('\0');
      expect(result.output).toBe('');
    }
  });

  it('created nothing outside /workspace, and left the symlinks as they were', async () => {
    const present = await sh(
      sandbox,
      `for f in ${ESCAPE_FILES.join(' ')}; do if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi; done; echo done`,
    );
    expect(present).toBe('done\n');
    expect(await sh(sandbox, 'ls -A /tmp /')).toBe(tmpBefore);
    expect(await sh(sandbox, 'readlink dangle tmp-link; test ! -e dangle && echo still-dangling')).toBe(
      '/tmp/dangling-target\n/tmp\nstill-dangling\n',
    );
    // Nor inside it: the refused writes did not create parent directories or stray files.
    expect(await sh(sandbox, 'git status --porcelain --untracked-files=all | sort')).toBe(
      [
        '?? dangle',
        '?? etc-link',
        '?? link1',
        '?? link2',
        '?? passwd-link',
        '?? tmp-chain',
        '?? tmp-link',
        '?? up',
        '',
      ].join('\n'),
    );
  });

  it('still answers a normal read afterwards', async () => {
    const r = await sendRaw(driver, sandbox, invocation(sandbox, 'read_file', { path: 'src/a.ts' }));
    expect(r.status).toBe('ok');
    expect(r.output).toBe('export const a = 1;\n');
    // An absolute path inside the workspace is fine.
    const abs = await run(sandbox, 'read_file', { path: '/workspace/README.md' });
    expect(abs.status).toBe('ok');
    expect(abs.output).toBe('# fixture\n');
  });

  it('grep over the workspace does not follow a symlink to /etc', async () => {
    await sh(sandbox, 'ln -s /etc etc2 && echo "root: only this one" > notes.txt');
    const r = await run(sandbox, 'grep', { pattern: 'root:', path: '.' });
    expect(r.status).toBe('ok');
    expect(r.data?.kind === 'grep' ? r.data.matches : undefined).toEqual([
      { path: 'notes.txt', line: 1, text: 'root: only this one' },
    ]);
    expect(r.output).not.toContain('root:x:0:0');
    await sh(sandbox, 'rm etc2 notes.txt');
  });

  it('list, glob and grep report symlinks without descending into them', async () => {
    const listed = await run(sandbox, 'list', { recursive: true });
    expect(listed.status).toBe('ok');
    const paths = listed.data?.kind === 'list' ? listed.data.entries.map((e) => `${e.path}:${e.type}`) : [];
    expect(paths).toContain('etc-link:symlink');
    expect(paths).toContain('up:symlink');
    expect(paths.filter((p) => /^(etc-link|link1|link2|up|tmp-link|tmp-chain)\//.test(p))).toEqual([]);

    const globbed = await run(sandbox, 'glob', { pattern: '**/passwd' });
    expect(globbed.status).toBe('ok');
    expect(globbed.data?.kind === 'glob' ? globbed.data.paths : undefined).toEqual([]);

    // A pattern that climbs matches nothing: patterns are matched against workspace paths only.
    const climbing = await run(sandbox, 'glob', { pattern: '../../etc/*' });
    expect(climbing.status).toBe('ok');
    expect(climbing.data?.kind === 'glob' ? climbing.data.paths : undefined).toEqual([]);
  });
});
