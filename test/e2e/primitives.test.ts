import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  actionHash,
  MAX_OUTPUT_CAP,
  newId,
  type ErrorCode,
  type InvocationResult,
  type OutputChunk,
  type ResultData,
} from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { invocation, makeRepo, run, runtimeApproval, rootExec, sendRaw, sh, startDriver } from '../support/sandbox';

/** Behaviour of each primitive, and of bad input at the NATS boundary, against a real sandbox. */

const LINES = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join('');

const FILES: Record<string, string> = {
  'README.md': '# fixture\n',
  'src/a.ts': 'export const a = 1;\n',
  'src/lib/b.ts': 'export const b = 2;\n// TODO: b\n',
  'src/lib/c.js': 'module.exports = 3;\n',
  'lines.txt': LINES,
  'edit-me.txt': 'alpha\nbeta\ngamma\n',
  'dup.txt': 'x = 1\ny = 2\nx = 1\nx = 1\n',
  'delete-me.txt': 'bye\n',
};

const sha256 = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/** The result's data, checked to be of the expected kind (failing with the error otherwise). */
function dataOf<K extends ResultData['kind']>(r: InvocationResult, kind: K): Extract<ResultData, { kind: K }> {
  expect(r.data?.kind, `${r.status} ${r.error?.code ?? ''}: ${r.error?.message ?? ''}`).toBe(kind);
  return r.data as Extract<ResultData, { kind: K }>;
}

const hostDirs: string[] = [];
afterAll(() => {
  for (const d of hostDirs) rmSync(d, { recursive: true, force: true });
});

/** One driver and sandbox for the enclosing describe block, torn down after it. */
function useSandbox(files: Record<string, string> = FILES): { driver: SandboxDriver; sandbox: Sandbox } {
  const ctx = {} as { driver: SandboxDriver; sandbox: Sandbox };
  beforeAll(async () => {
    ctx.driver = await startDriver();
    const repoDir = makeRepo(files);
    hostDirs.push(repoDir);
    ctx.sandbox = await ctx.driver.createSandbox({ runId: newId('run'), repoDir });
  });
  afterAll(async () => ctx.driver?.close());
  return ctx;
}

async function catFile(sandbox: Sandbox, file: string): Promise<string> {
  return sh(sandbox, `cat -- '${file}'`);
}

describe('read_file, write_file, edit_file', () => {
  const t = useSandbox();

  it('read_file: offset and limit count lines from 1; sha256 and totals cover the whole file', async () => {
    const r = await run(t.sandbox, 'read_file', { path: 'lines.txt', offset: 3, limit: 4 });
    expect(r.status).toBe('ok');
    expect(r.output).toBe('line 3\nline 4\nline 5\nline 6\n');
    expect(r.truncated).toBe(false);
    expect(dataOf(r, 'read_file')).toEqual({
      kind: 'read_file',
      sha256: sha256(LINES),
      totalBytes: Buffer.byteLength(LINES),
      totalLines: 10,
      startLine: 3,
      endLine: 6,
    });

    const tail = await run(t.sandbox, 'read_file', { path: 'lines.txt', offset: 9 });
    expect(tail.output).toBe('line 9\nline 10\n');
    expect(dataOf(tail, 'read_file')).toMatchObject({ startLine: 9, endLine: 10, sha256: sha256(LINES) });

    const whole = await run(t.sandbox, 'read_file', { path: 'lines.txt' });
    expect(whole.output).toBe(LINES);
    expect(dataOf(whole, 'read_file')).toMatchObject({ startLine: 1, endLine: 10, totalLines: 10 });
  });

  it('read_file: a directory is is_directory, with a hint to list it', async () => {
    const r = await run(t.sandbox, 'read_file', { path: 'src' });
    expect(r.status).toBe('rejected');
    expect(r.error?.code).toBe('is_directory');
    expect(r.error?.message).toMatch(/list/);
    expect(r.error?.path).toBe('src');
  });

  it('read_file: a missing file is not_found', async () => {
    const r = await run(t.sandbox, 'read_file', { path: 'src/nope.ts' });
    expect(r.status).toBe('failed');
    expect(r.error?.code).toBe('not_found');
    expect(r.error?.path).toBe('src/nope.ts');
    expect(r.data).toBeUndefined();
  });

  it('read_file: the output cap keeps whole lines and says it truncated', async () => {
    // "line N\n" is 7 bytes: 20 bytes hold two whole lines, and a third would be cut.
    const r = await run(t.sandbox, 'read_file', { path: 'lines.txt' }, { outputCap: 20 });
    expect(r.status).toBe('ok');
    expect(r.output).toBe('line 1\nline 2\n');
    expect(r.truncated).toBe(true);
    expect(r.bytes).toBe(Buffer.byteLength(LINES));
    expect(dataOf(r, 'read_file')).toMatchObject({ startLine: 1, endLine: 2, totalLines: 10, sha256: sha256(LINES) });
  });

  it('read_file: a FIFO is refused at once instead of blocking the daemon', async () => {
    await sh(t.sandbox, 'mkfifo pipe');
    const started = Date.now();
    const r = await run(t.sandbox, 'read_file', { path: 'pipe' }, { timeoutMs: 3_000 });
    expect(r.status).toBe('rejected');
    expect(r.error?.code).toBe('invalid_path');
    expect(Date.now() - started).toBeLessThan(2_000);
    await sh(t.sandbox, 'rm pipe');
  });

  it('write_file: creates parent directories and reports the file it changed', async () => {
    const content = 'hello\nworld\n';
    const r = await run(t.sandbox, 'write_file', { path: 'new/deep/dir/file.txt', content });
    expect(r.status).toBe('ok');
    expect(r.filesChanged).toEqual(['new/deep/dir/file.txt']);
    expect(dataOf(r, 'write_file')).toEqual({ kind: 'write_file', sha256: sha256(content), created: true });
    expect(await catFile(t.sandbox, 'new/deep/dir/file.txt')).toBe(content);
    expect(await sh(t.sandbox, 'stat -c %a new/deep/dir/file.txt')).toBe('644\n');
  });

  it('write_file: expectedSha256 null refuses to overwrite an existing file', async () => {
    const r = await run(t.sandbox, 'write_file', { path: 'README.md', content: 'clobbered\n', expectedSha256: null });
    expect(r.status).toBe('rejected');
    expect(r.error?.code).toBe('exists');
    expect(r.filesChanged).toEqual([]);
    expect(await catFile(t.sandbox, 'README.md')).toBe(FILES['README.md']);

    const fresh = await run(t.sandbox, 'write_file', { path: 'brand-new.txt', content: 'new\n', expectedSha256: null });
    expect(fresh.status).toBe('ok');
    expect(dataOf(fresh, 'write_file').created).toBe(true);
  });

  it('write_file: a wrong expectedSha256 is hash_mismatch and writes nothing; the right one writes', async () => {
    const wrong = await run(t.sandbox, 'write_file', {
      path: 'README.md',
      content: 'clobbered\n',
      expectedSha256: sha256('something else'),
    });
    expect(wrong.status).toBe('rejected');
    expect(wrong.error?.code).toBe('hash_mismatch');
    expect(await catFile(t.sandbox, 'README.md')).toBe(FILES['README.md']);

    const right = await run(t.sandbox, 'write_file', {
      path: 'README.md',
      content: '# updated\n',
      expectedSha256: sha256(FILES['README.md']!),
    });
    expect(right.status).toBe('ok');
    expect(right.filesChanged).toEqual(['README.md']);
    expect(dataOf(right, 'write_file')).toEqual({ kind: 'write_file', sha256: sha256('# updated\n'), created: false });
    expect(await catFile(t.sandbox, 'README.md')).toBe('# updated\n');
  });

  it('write_file: keeps the mode of an existing executable file', async () => {
    await sh(t.sandbox, "printf '#!/bin/sh\\necho v1\\n' > tool.sh && chmod 750 tool.sh");
    expect(await sh(t.sandbox, './tool.sh')).toBe('v1\n');
    const r = await run(t.sandbox, 'write_file', { path: 'tool.sh', content: '#!/bin/sh\necho v2\n' });
    expect(r.status).toBe('ok');
    expect(await sh(t.sandbox, 'stat -c %a tool.sh && ./tool.sh')).toBe('750\nv2\n');
  });

  it('edit_file: replaces the unique occurrence and returns the new and previous sha', async () => {
    const before = await run(t.sandbox, 'read_file', { path: 'edit-me.txt' });
    const previous = dataOf(before, 'read_file').sha256;
    expect(previous).toBe(sha256(FILES['edit-me.txt']!));
    const r = await run(t.sandbox, 'edit_file', {
      path: 'edit-me.txt',
      oldText: 'beta',
      newText: 'BETA',
      expectedSha256: previous,
    });
    expect(r.status).toBe('ok');
    expect(r.filesChanged).toEqual(['edit-me.txt']);
    expect(dataOf(r, 'edit_file')).toEqual({
      kind: 'edit_file',
      sha256: sha256('alpha\nBETA\ngamma\n'),
      previousSha256: previous,
    });
    expect(await catFile(t.sandbox, 'edit-me.txt')).toBe('alpha\nBETA\ngamma\n');
  });

  it('edit_file: old_text_not_found and old_text_not_unique (with the count) leave the file alone', async () => {
    const dup = FILES['dup.txt']!;
    const notFound = await run(t.sandbox, 'edit_file', {
      path: 'dup.txt',
      oldText: 'z = 26',
      newText: 'q',
      expectedSha256: sha256(dup),
    });
    expect(notFound.status).toBe('rejected');
    expect(notFound.error?.code).toBe('old_text_not_found');

    const notUnique = await run(t.sandbox, 'edit_file', {
      path: 'dup.txt',
      oldText: 'x = 1',
      newText: 'x = 9',
      expectedSha256: sha256(dup),
    });
    expect(notUnique.status).toBe('rejected');
    expect(notUnique.error?.code).toBe('old_text_not_unique');
    expect(notUnique.error?.message).toMatch(/\b3 times\b/);
    expect(notUnique.filesChanged).toEqual([]);
    expect(await catFile(t.sandbox, 'dup.txt')).toBe(dup);

    // With enough context the same edit goes through.
    const unique = await run(t.sandbox, 'edit_file', {
      path: 'dup.txt',
      oldText: 'y = 2\nx = 1',
      newText: 'y = 2\nx = 9',
      expectedSha256: sha256(dup),
    });
    expect(unique.status).toBe('ok');
    expect(await catFile(t.sandbox, 'dup.txt')).toBe('x = 1\ny = 2\nx = 9\nx = 1\n');
  });

  it(
    'edit_file: hash_mismatch when the file changed since it was read, ' + 'and the change made meanwhile stays',
    async () => {
      const read = await run(t.sandbox, 'read_file', { path: 'src/lib/b.ts' });
      const sha = dataOf(read, 'read_file').sha256;
      await sh(t.sandbox, "echo 'export const late = true;' >> src/lib/b.ts");
      const changed = `${FILES['src/lib/b.ts']!}export const late = true;\n`;
      const r = await run(t.sandbox, 'edit_file', {
        path: 'src/lib/b.ts',
        oldText: 'b = 2',
        newText: 'b = 3',
        expectedSha256: sha,
      });
      expect(r.status).toBe('rejected');
      expect(r.error?.code).toBe('hash_mismatch');
      expect(r.error?.message).toMatch(/read it again/);
      expect(await catFile(t.sandbox, 'src/lib/b.ts')).toBe(changed);
    },
  );
});

describe('list, glob, grep', () => {
  const t = useSandbox();

  it('list: non-recursive lists the top level only, with types and sizes', async () => {
    const r = await run(t.sandbox, 'list', {});
    expect(r.status).toBe('ok');
    const entries = dataOf(r, 'list').entries;
    expect(entries.map((e) => e.path)).toEqual([
      '.git',
      'README.md',
      'delete-me.txt',
      'dup.txt',
      'edit-me.txt',
      'lines.txt',
      'src',
    ]);
    expect(entries.find((e) => e.path === 'src')).toEqual({ path: 'src', type: 'dir', size: 0 });
    expect(entries.find((e) => e.path === 'lines.txt')).toEqual({
      path: 'lines.txt',
      type: 'file',
      size: Buffer.byteLength(LINES),
    });
    expect(r.output.split('\n')).toContain('src/');
  });

  it('list: recursive descends into directories but not into .git', async () => {
    const r = await run(t.sandbox, 'list', { recursive: true });
    expect(r.status).toBe('ok');
    const paths = dataOf(r, 'list').entries.map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining(['.git', 'src', 'src/lib', 'src/a.ts', 'src/lib/b.ts', 'src/lib/c.js']),
    );
    expect(paths.filter((p) => p.startsWith('.git/'))).toEqual([]);

    const sub = await run(t.sandbox, 'list', { path: 'src/lib' });
    expect(dataOf(sub, 'list').entries.map((e) => e.path)).toEqual(['src/lib/b.ts', 'src/lib/c.js']);
  });

  it('list: a file is not_a_directory', async () => {
    const r = await run(t.sandbox, 'list', { path: 'README.md' });
    expect(r.status).toBe('rejected');
    expect(r.error?.code).toBe('not_a_directory');
  });

  it('glob: **/*.ts finds TypeScript files at any depth, and nothing else', async () => {
    const r = await run(t.sandbox, 'glob', { pattern: '**/*.ts' });
    expect(r.status).toBe('ok');
    expect([...dataOf(r, 'glob').paths].sort()).toEqual(['src/a.ts', 'src/lib/b.ts']);

    // Relative to `path`, returned relative to the workspace.
    const inLib = await run(t.sandbox, 'glob', { pattern: '*', path: 'src/lib' });
    expect([...dataOf(inLib, 'glob').paths].sort()).toEqual(['src/lib/b.ts', 'src/lib/c.js']);

    const none = await run(t.sandbox, 'glob', { pattern: '**/*.rs' });
    expect(none.status).toBe('ok');
    expect(dataOf(none, 'glob').paths).toEqual([]);
  });

  it('grep: matches carry path, line and text', async () => {
    const r = await run(t.sandbox, 'grep', { pattern: 'export const [ab]' });
    expect(r.status).toBe('ok');
    const matches = [...dataOf(r, 'grep').matches].sort((x, y) => x.path.localeCompare(y.path));
    expect(matches).toEqual([
      { path: 'src/a.ts', line: 1, text: 'export const a = 1;' },
      { path: 'src/lib/b.ts', line: 1, text: 'export const b = 2;' },
    ]);

    const todo = await run(t.sandbox, 'grep', { pattern: 'todo', ignoreCase: true, path: 'src' });
    expect(dataOf(todo, 'grep').matches).toEqual([{ path: 'src/lib/b.ts', line: 2, text: '// TODO: b' }]);

    const onlyJs = await run(t.sandbox, 'grep', { pattern: '=', include: '*.js' });
    expect(dataOf(onlyJs, 'grep').matches).toEqual([{ path: 'src/lib/c.js', line: 1, text: 'module.exports = 3;' }]);
  });

  it("grep: a bad regex fails with grep's own message", async () => {
    const r = await run(t.sandbox, 'grep', { pattern: 'a(b' });
    expect(r.status).toBe('failed');
    expect(r.exitCode).toBe(2);
    expect(r.error?.message).toMatch(/^grep: .*(Unmatched|parenthes)/i);
  });

  it('grep: no match is ok with zero matches', async () => {
    const r = await run(t.sandbox, 'grep', { pattern: 'no such text anywhere' });
    expect(r.status).toBe('ok');
    expect(r.exitCode).toBe(1);
    expect(dataOf(r, 'grep').matches).toEqual([]);
    expect(r.output).toBe('');
  });
});

describe('exec', () => {
  const t = useSandbox();

  it('propagates the exit code', async () => {
    const r = await run(t.sandbox, 'exec', { command: 'echo before; exit 3' });
    expect(r.status).toBe('failed');
    expect(r.exitCode).toBe(3);
    expect(r.output).toBe('before\n');
    const okRun = await run(t.sandbox, 'exec', { command: 'true' });
    expect(okRun.status).toBe('ok');
    expect(okRun.exitCode).toBe(0);
  });

  it('captures stdout and stderr', async () => {
    const r = await run(t.sandbox, 'exec', { command: 'echo to-out; echo to-err >&2; echo out-again' });
    expect(r.status).toBe('ok');
    expect(r.output).toContain('to-out\n');
    expect(r.output).toContain('to-err\n');
    expect(r.output).toContain('out-again\n');
    expect(dataOf(r, 'exec')).toEqual({
      kind: 'exec',
      stdoutBytes: 'to-out\nout-again\n'.length,
      stderrBytes: 'to-err\n'.length,
    });
  });

  it('streams output chunks, in order, while the command runs', async () => {
    const chunks: OutputChunk[] = [];
    // The command waits for a file the test creates only once the first chunk has arrived: it can
    // finish with "released" only if output really streamed while it was running.
    const input = {
      command:
        'echo chunk1; for i in $(seq 1 200); do test -e stream-go && break; sleep 0.05; done; test -e stream-go && ' +
        'echo released; echo err-chunk >&2; sleep 0.3; echo last',
    };
    let released: Promise<unknown> | undefined;
    const r = await t.sandbox.invoke('exec', input, {
      approval: runtimeApproval('exec', input, 'test'),
      onOutput: (chunk) => {
        chunks.push(chunk);
        if (!released && chunk.data.includes('chunk1'))
          released = run(t.sandbox, 'write_file', { path: 'stream-go', content: '' });
      },
    });
    await released;
    expect(r.status).toBe('ok');
    expect(r.output).toBe('chunk1\nreleased\nerr-chunk\nlast\n');
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
    expect(chunks.map((c) => c.data).join('')).toBe('chunk1\nreleased\nerr-chunk\nlast\n');
    expect(chunks.find((c) => c.data.includes('err-chunk'))?.stream).toBe('stderr');
    expect(chunks.find((c) => c.data.includes('chunk1'))?.stream).toBe('stdout');
  });

  it('runs with a scrubbed environment: no gatehouse config, no NATS credentials', async () => {
    const env = await sh(t.sandbox, 'env');
    expect(env).toMatch(/^PATH=/m);
    expect(env).toMatch(/^HOME=\/tmp$/m);
    expect(env).not.toMatch(/^GATEHOUSE_|_GATEHOUSE_/m);
    expect(env).not.toMatch(/NATS/i);
    expect(env).not.toContain('nats://');
    expect(env).not.toMatch(/^SU[A-Z2-7]{50,}/m); // an nkey seed
    expect(env).not.toContain('BEGIN');
    // The daemon's state directory is closed to commands; the credentials file in it was deleted
    // once the daemon read it (looked at as root, around the daemon).
    const closed = await run(t.sandbox, 'exec', { command: 'ls -A /var/gatehouse' });
    expect(closed.status).toBe('failed');
    expect(closed.output).toMatch(/Permission denied/);
    const state = await rootExec(t.driver, t.sandbox, ['ls', '-A', '/var/gatehouse']);
    expect(state.exitCode).toBe(0);
    expect(state.output).toContain('baseline.git');
    expect(state.output).not.toContain('creds');
    // git is made safe by the daemon itself, whatever the caller passed: the wrapper first on PATH,
    // and the program-key overrides after the caller's own GIT_CONFIG entries.
    const git = await run(t.sandbox, 'exec', {
      command:
        'echo "$PATH"; echo "$GIT_CONFIG_COUNT"; git config --get core.fsmonitor; git config --get safe.directory',
      env: {
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'core.fsmonitor',
        GIT_CONFIG_VALUE_0: './evil.sh',
        PATH: '/usr/bin:/bin',
      },
    });
    const [pathLine, count, fsmonitor, safeDir] = git.output.trim().split('\n');
    expect(pathLine).toBe('/opt/gatehouse/bin:/usr/bin:/bin');
    expect(Number(count)).toBeGreaterThan(20);
    expect(fsmonitor).toBe('false');
    expect(safeDir).toBe('*');
    // Extra variables are passed through.
    const r = await run(t.sandbox, 'exec', { command: 'echo "$EXTRA_VAR"', env: { EXTRA_VAR: 'from-the-caller' } });
    expect(r.output).toBe('from-the-caller\n');
  });

  it('trackChanges lists the files the command touched', async () => {
    const r = await run(t.sandbox, 'exec', {
      command:
        'echo new > tracked-new.txt && echo more >> README.md && rm delete-me.txt && mkdir -p d/e && echo x > ' +
        'd/e/f.txt && cat lines.txt > /dev/null',
      trackChanges: true,
    });
    expect(r.status).toBe('ok');
    expect(r.filesChanged).toEqual(['README.md', 'd/e/f.txt', 'delete-me.txt', 'tracked-new.txt']);

    const untracked = await run(t.sandbox, 'exec', { command: 'echo again > tracked-new.txt' });
    expect(untracked.filesChanged).toEqual([]);
  });

  it('cancel through the AbortSignal kills the command quickly and reports aborted', async () => {
    const ac = new AbortController();
    const started = Date.now();
    setTimeout(() => ac.abort(), 300);
    const r = await run(
      t.sandbox,
      'exec',
      { command: 'echo started; sleep 31.5; echo never' },
      { signal: ac.signal, timeoutMs: 60_000 },
    );
    const took = Date.now() - started;
    expect(r.status).toBe('aborted');
    expect(r.error?.code).toBe('cancelled');
    expect(r.output).toBe('started\n');
    expect(took).toBeLessThan(3_000);
    // Nothing of it is left running.
    const left = await sh(
      t.sandbox,
      "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 31' || true",
    );
    expect(left).toBe('0\n');
  });

  it('a command that outlives timeoutMs is killed and reported as timeout', async () => {
    const started = Date.now();
    const r = await run(t.sandbox, 'exec', { command: 'sleep 20' }, { timeoutMs: 500 });
    expect(r.status).toBe('timeout');
    expect(r.error?.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('cwd runs the command in that workspace directory', async () => {
    const r = await run(t.sandbox, 'exec', { command: 'pwd; ls', cwd: 'src/lib' });
    expect(r.status).toBe('ok');
    expect(r.output).toBe('/workspace/src/lib\nb.ts\nc.js\n');
    const file = await run(t.sandbox, 'exec', { command: 'pwd', cwd: 'README.md' });
    expect(file.status).toBe('rejected');
    expect(file.error?.code).toBe('not_a_directory');
    const missing = await run(t.sandbox, 'exec', { command: 'pwd', cwd: 'no/such/dir' });
    expect(missing.status).toBe('failed');
    expect(missing.error?.code).toBe('not_found');
  });
});

describe('changes', () => {
  const t = useSandbox();

  it('is empty before anything changed', async () => {
    const c = await t.sandbox.changes();
    expect(c.files).toEqual([]);
    expect(c.diff).toBe('');
  });

  it('lists added, modified and deleted files, and the diff applies to a fresh copy of the repo', async () => {
    expect((await run(t.sandbox, 'write_file', { path: 'added.txt', content: 'brand new\n' })).status).toBe('ok');
    expect(
      (await run(t.sandbox, 'write_file', { path: 'src/new/n.ts', content: 'export const n = 0;\n' })).status,
    ).toBe('ok');
    const read = await run(t.sandbox, 'read_file', { path: 'src/a.ts' });
    const edit = await run(t.sandbox, 'edit_file', {
      path: 'src/a.ts',
      oldText: 'a = 1',
      newText: 'a = 42',
      expectedSha256: dataOf(read, 'read_file').sha256,
    });
    expect(edit.status).toBe('ok');
    await sh(t.sandbox, "rm delete-me.txt && printf '\\000\\001\\002binary\\377' > blob.bin");

    const c = await t.sandbox.changes();
    expect(c.truncated).toBe(false);
    expect([...c.files].sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      { path: 'added.txt', status: 'added' },
      { path: 'blob.bin', status: 'added' },
      { path: 'delete-me.txt', status: 'deleted' },
      { path: 'src/a.ts', status: 'modified' },
      { path: 'src/new/n.ts', status: 'added' },
    ]);

    const fresh = makeRepo(FILES);
    hostDirs.push(fresh);
    const patch = path.join(fresh, '..', `${path.basename(fresh)}.patch`);
    hostDirs.push(patch);
    writeFileSync(patch, c.diff);
    execFileSync('git', ['apply', '--check', patch], { cwd: fresh, stdio: 'pipe' });
    execFileSync('git', ['apply', patch], { cwd: fresh, stdio: 'pipe' });
    expect(await readFile(path.join(fresh, 'src/a.ts'), 'utf8')).toBe('export const a = 42;\n');
    expect(await readFile(path.join(fresh, 'added.txt'), 'utf8')).toBe('brand new\n');
    expect(await readFile(path.join(fresh, 'src/new/n.ts'), 'utf8')).toBe('export const n = 0;\n');
    expect(await readFile(path.join(fresh, 'blob.bin'))).toEqual(
      Buffer.from([0, 1, 2, ...Buffer.from('binary'), 0xff]),
    );
    await expect(readFile(path.join(fresh, 'delete-me.txt'))).rejects.toThrow(/ENOENT/);
    // The sandbox's own repository was not touched: the baseline lives outside it.
    expect(await sh(t.sandbox, 'git log --format=%s')).toBe('fixture\n');
  });
});

describe('bad input at the NATS boundary', () => {
  const t = useSandbox();

  /** An exec that leaves a trace if it runs, so every refused one can be checked not to have. */
  const tracer = (name: string) => ({ command: `touch /workspace/ran-${name}` });
  const inv = (name: string, extra: Record<string, unknown> = {}) => invocation(t.sandbox, 'exec', tracer(name), extra);

  interface BadCase {
    name: string;
    message: () => unknown;
    code: ErrorCode;
    /** error.path, when the refusal names a field. */
    field?: string;
    /** Words the message must contain (naming the field or what is wrong). */
    says: RegExp | (() => RegExp);
  }

  const cases: BadCase[] = [
    { name: 'not JSON', message: () => '{nope', code: 'invalid_message', says: /not JSON/ },
    { name: 'empty message', message: () => new Uint8Array(0), code: 'invalid_message', says: /not JSON/ },
    { name: 'a JSON array', message: () => '[1,2,3]', code: 'invalid_message', says: /\(root\).*object/i },
    { name: 'null', message: () => 'null', code: 'invalid_message', says: /\(root\)/ },
    { name: 'a JSON string', message: () => '"read_file"', code: 'invalid_message', says: /\(root\)/ },
    // The approval is looked for before the schema, so an empty object is refused for lacking one.
    { name: 'an empty object', message: () => ({}), code: 'approval_missing', field: 'approval', says: /approval/ },
    {
      name: 'an unknown primitive',
      message: () => ({ ...inv('unknown-primitive'), primitive: 'rm_rf' }),
      code: 'invalid_message',
      field: 'primitive',
      says: /^primitive: /,
    },
    {
      name: 'an unknown field in input (strict schema)',
      message: () => invocation(t.sandbox, 'exec', { ...tracer('extra-input'), sudo: true }),
      code: 'invalid_message',
      field: 'input',
      says: /sudo/,
    },
    {
      name: 'an unknown top-level field',
      message: () => inv('extra-top', { privileged: true }),
      code: 'invalid_message',
      says: /privileged/,
    },
    {
      name: 'a wrong field type in input',
      message: () => invocation(t.sandbox, 'read_file', { path: 42 }),
      code: 'invalid_message',
      field: 'input.path',
      says: /^input\.path: .*string/,
    },
    {
      name: 'a wrong type for trackChanges',
      message: () => invocation(t.sandbox, 'exec', { ...tracer('bad-bool'), trackChanges: 'yes' }),
      code: 'invalid_message',
      field: 'input.trackChanges',
      says: /^input\.trackChanges: .*boolean/,
    },
    {
      name: 'a string timeoutMs',
      message: () => inv('string-timeout', { timeoutMs: '1000' }),
      code: 'invalid_message',
      field: 'timeoutMs',
      says: /^timeoutMs: /,
    },
    {
      name: 'a missing approval',
      message: () => {
        const m = inv('no-approval');
        delete m.approval;
        return m;
      },
      code: 'approval_missing',
      field: 'approval',
      says: /approval/,
    },
    {
      name: 'an approval for a different action',
      message: () =>
        inv('mismatch', {
          approval: {
            id: 'test',
            actionHash: actionHash({ name: 'exec', input: { command: 'echo harmless' } }),
            by: 'policy',
          },
        }),
      code: 'approval_mismatch',
      field: 'approval.actionHash',
      says: /different action/,
    },
    {
      name: 'an approval for the same input under another primitive',
      message: () => {
        const input = { path: 'README.md', content: 'owned\n' };
        return invocation(t.sandbox, 'write_file', input, {
          approval: { id: 'test', actionHash: actionHash({ name: 'read_file', input }), by: 'policy' },
        });
      },
      code: 'approval_mismatch',
      field: 'approval.actionHash',
      says: /different action/,
    },
    {
      name: 'an approval by an unknown authority',
      message: () =>
        inv('bad-by', {
          approval: { id: 'x', actionHash: actionHash({ name: 'exec', input: tracer('bad-by') }), by: 'root' },
        }),
      code: 'invalid_message',
      field: 'approval.by',
      says: /^approval\.by: /,
    },
    {
      name: 'a malformed actionHash',
      message: () => inv('bad-hash', { approval: { id: 'x', actionHash: 'abc', by: 'policy' } }),
      code: 'invalid_message',
      field: 'approval.actionHash',
      says: /^approval\.actionHash: /,
    },
    {
      name: 'another runId in the body',
      message: () => inv('wrong-run', { runId: 'run_someone_else' }),
      code: 'wrong_sandbox',
      field: 'runId',
      says: () => new RegExp(`^runId .*serves run ${t.sandbox.runId} sandbox ${t.sandbox.sandboxId}$`),
    },
    {
      name: 'another sandboxId in the body',
      message: () => inv('wrong-sbx', { sandboxId: 'sbx_someone_else' }),
      code: 'wrong_sandbox',
      field: 'sandboxId',
      says: () => new RegExp(`^sandboxId .*serves run ${t.sandbox.runId} sandbox ${t.sandbox.sandboxId}$`),
    },
    {
      name: 'timeoutMs 0',
      message: () => inv('timeout-0', { timeoutMs: 0 }),
      code: 'invalid_message',
      field: 'timeoutMs',
      says: /^timeoutMs: /,
    },
    {
      name: 'a negative timeoutMs',
      message: () => inv('timeout-neg', { timeoutMs: -1000 }),
      code: 'invalid_message',
      field: 'timeoutMs',
      says: /^timeoutMs: /,
    },
    {
      name: 'a fractional timeoutMs',
      message: () => inv('timeout-frac', { timeoutMs: 1.5 }),
      code: 'invalid_message',
      field: 'timeoutMs',
      says: /^timeoutMs: /,
    },
    {
      name: 'outputCap above the maximum',
      message: () => inv('cap', { outputCap: MAX_OUTPUT_CAP + 1 }),
      code: 'invalid_message',
      field: 'outputCap',
      says: /^outputCap: /,
    },
    {
      name: 'an invocationId with a dot',
      message: () => inv('dot', { invocationId: 'inv.1' }),
      code: 'invalid_message',
      field: 'invocationId',
      says: /^invocationId: /,
    },
    {
      name: 'an invocationId with a * wildcard',
      message: () => inv('star', { invocationId: 'inv*' }),
      code: 'invalid_message',
      field: 'invocationId',
      says: /^invocationId: /,
    },
    {
      name: 'an invocationId that is the > wildcard',
      message: () => inv('gt', { invocationId: '>' }),
      code: 'invalid_message',
      field: 'invocationId',
      says: /^invocationId: /,
    },
    {
      name: 'protocol version 2',
      message: () => inv('v2', { v: 2 }),
      code: 'invalid_message',
      field: 'v',
      says: /^v: /,
    },
    {
      name: 'an env variable with a bad name',
      message: () => invocation(t.sandbox, 'exec', { ...tracer('bad-env'), env: { 'BAD-NAME': 'x' } }),
      code: 'invalid_message',
      field: 'input.env.BAD-NAME',
      says: /^input\.env/,
    },
  ];

  it.each(cases)('$name is rejected', async ({ message, code, field, says }) => {
    const r = await sendRaw(t.driver, t.sandbox, message());
    expect(r.status).toBe('rejected');
    expect(r.error?.code).toBe(code);
    expect(r.error?.message).toMatch(typeof says === 'function' ? says() : says);
    expect(r.error?.path).toBe(field);
    expect(r.data).toBeUndefined();
    expect(r.output).toBe('');
    expect(r.replayed).toBe(false);
  });

  it('runs none of the refused actions, and still answers a normal invocation', async () => {
    expect(await sh(t.sandbox, 'ls -A /workspace | grep ^ran- || echo none')).toBe('none\n');
    expect(await catFile(t.sandbox, 'README.md')).toBe(FILES['README.md']);
    // Positive control: the same tracer, properly approved, does leave its trace.
    const r = await sendRaw(t.driver, t.sandbox, inv('control'));
    expect(r.status).toBe('ok');
    expect(await sh(t.sandbox, 'ls -A /workspace | grep ^ran-')).toBe('ran-control\n');
  });

  it('echoes the invocation id when it can, and "unknown" when the message is not JSON', async () => {
    const m = inv('echo', { timeoutMs: 0 });
    expect((await sendRaw(t.driver, t.sandbox, m)).invocationId).toBe(m.invocationId);
    expect((await sendRaw(t.driver, t.sandbox, '{nope')).invocationId).toBe('unknown');
  });
});

describe('redelivery', () => {
  const t = useSandbox();

  it('the same invocation sent twice runs once; the second reply is the recorded result', async () => {
    const m = invocation(t.sandbox, 'exec', { command: 'echo line >> log.txt; wc -l < log.txt' });
    const first = await sendRaw(t.driver, t.sandbox, m);
    const second = await sendRaw(t.driver, t.sandbox, m);
    expect(first.status).toBe('ok');
    expect(first.replayed).toBe(false);
    expect(first.output).toBe('1\n');
    expect(second.replayed).toBe(true);
    expect(second.invocationId).toBe(first.invocationId);
    expect({ ...second, replayed: false }).toEqual(first);
    expect(await catFile(t.sandbox, 'log.txt')).toBe('line\n');
  });

  it('two copies delivered concurrently still run once', async () => {
    const m = invocation(t.sandbox, 'exec', { command: 'echo line >> log2.txt; sleep 0.3; wc -l < log2.txt' });
    const results = await Promise.all([sendRaw(t.driver, t.sandbox, m), sendRaw(t.driver, t.sandbox, m)]);
    expect(results.map((r) => r.replayed).sort()).toEqual([false, true]);
    expect(results.map((r) => r.output)).toEqual(['1\n', '1\n']);
    expect(await catFile(t.sandbox, 'log2.txt')).toBe('line\n');
  });

  it('a reused invocation id does not run a different action', async () => {
    const m = invocation(t.sandbox, 'exec', { command: 'echo first > reused.txt' });
    expect((await sendRaw(t.driver, t.sandbox, m)).replayed).toBe(false);
    const other = invocation(
      t.sandbox,
      'exec',
      { command: 'echo second > reused.txt; touch reused-ran.txt' },
      { invocationId: m.invocationId },
    );
    const r = await sendRaw(t.driver, t.sandbox, other);
    expect(r.replayed).toBe(true);
    expect(await sh(t.sandbox, 'cat reused.txt; ls reused-ran.txt 2>/dev/null || echo absent')).toBe('first\nabsent\n');
  });
});
