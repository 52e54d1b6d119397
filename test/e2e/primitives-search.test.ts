import { describe, expect, it } from 'vitest';
import { run } from '../support/sandbox';
import { LINES, dataOf, useSandbox } from '../support/primitives';

/** Behaviour of list, glob and grep, against a real sandbox. */

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
