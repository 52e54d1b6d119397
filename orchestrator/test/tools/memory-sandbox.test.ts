import { describe, expect, it } from 'vitest';
import { actionHash, sha256Hex, type PrimitiveInput, type PrimitiveName } from '@gatehouse/shared';
import { MemorySandbox } from '../../src/testing/index';

/** Invokes with an approval for exactly this action, as the pipeline does. */
function run<P extends PrimitiveName>(s: MemorySandbox, primitive: P, input: PrimitiveInput<P>) {
  return s.invoke(primitive, input, {
    approval: { id: 'evt-test', actionHash: actionHash({ name: primitive, input }), by: 'policy' },
  });
}

describe('MemorySandbox: the daemon checks the pipeline relies on', () => {
  it('refuses an approval given for a different action, and changes nothing', async () => {
    const s = new MemorySandbox({ files: { 'a.txt': 'one\n' } });
    const r = await s.invoke(
      'write_file',
      { path: 'a.txt', content: 'evil' },
      { approval: { id: 'x', actionHash: actionHash({ name: 'read_file', input: { path: 'a.txt' } }), by: 'user' } },
    );
    expect(r).toMatchObject({ status: 'rejected', error: { code: 'approval_mismatch' } });
    expect(s.workspace.files.get('a.txt')).toBe('one\n');
  });

  it('keeps paths inside the workspace, lexically and through links', async () => {
    const s = new MemorySandbox({ files: { 'a.txt': 'x' }, links: { out: '/etc', up: '..' } });
    expect(await run(s, 'read_file', { path: '../etc/passwd' })).toMatchObject({
      error: { code: 'path_outside_workspace' },
    });
    expect(await run(s, 'read_file', { path: 'out/passwd' })).toMatchObject({
      error: { code: 'path_outside_workspace' },
    });
    const where = await run(s, 'resolve', { paths: ['out/passwd', 'a.txt', 'up/x'] });
    expect(where.data).toMatchObject({
      kind: 'resolve',
      paths: [
        { path: 'out/passwd', real: '/etc/passwd', outside: true },
        { path: 'a.txt', real: 'a.txt', outside: false, exists: true },
        { path: 'up/x', real: '/x', outside: true },
      ],
    });
  });

  it('reports a dangling link and where it points', async () => {
    const s = new MemorySandbox({ links: { 'l.txt': 'missing/new.txt' } });
    const r = await run(s, 'resolve', { paths: ['l.txt'] });
    expect(r.data).toMatchObject({ paths: [{ real: 'missing/new.txt', exists: false, dangling: true }] });
  });

  it('holds the write and edit preconditions, as the daemon does', async () => {
    const s = new MemorySandbox({ files: { 'a.txt': 'one two two\n' } });
    const sha = sha256Hex('one two two\n');
    expect(await run(s, 'write_file', { path: 'a.txt', content: 'x', expectedSha256: null })).toMatchObject({
      error: { code: 'exists' },
    });
    expect(
      await run(s, 'edit_file', { path: 'a.txt', oldText: 'two', newText: '2', expectedSha256: sha }),
    ).toMatchObject({ error: { code: 'old_text_not_unique', message: expect.stringContaining('2 times') as unknown } });
    expect(
      await run(s, 'edit_file', { path: 'a.txt', oldText: 'one', newText: '1', expectedSha256: 'ab'.repeat(32) }),
    ).toMatchObject({ error: { code: 'hash_mismatch' } });
    const ok = await run(s, 'edit_file', { path: 'a.txt', oldText: 'one', newText: '1', expectedSha256: sha });
    expect(ok).toMatchObject({ status: 'ok', filesChanged: ['a.txt'], data: { previousSha256: sha } });
    expect(s.workspace.files.get('a.txt')).toBe('1 two two\n');
  });

  it('reads lines with the daemon data, lists, globs and greps the in-memory files', async () => {
    const s = new MemorySandbox({ files: { 'src/a.ts': 'const a = 1;\nconst b = 2;\n', 'src/b.md': 'b\n' } });
    const read = await run(s, 'read_file', { path: 'src/a.ts', offset: 2 });
    expect(read).toMatchObject({ output: 'const b = 2;\n', data: { startLine: 2, endLine: 2, totalLines: 2 } });
    expect((await run(s, 'list', { path: 'src' })).output).toBe('src/a.ts\nsrc/b.md');
    expect((await run(s, 'glob', { pattern: '**/*.ts' })).data).toEqual({ kind: 'glob', paths: ['src/a.ts'] });
    expect((await run(s, 'grep', { pattern: 'b = [0-9]' })).output).toBe('src/a.ts:2:const b = 2;');
  });

  it("answers commands from its responder, reports the files they changed, and the run's changes", async () => {
    const s = new MemorySandbox({
      files: { 'a.txt': 'one\n' },
      exec: ({ command, workspace }) => {
        workspace.write('b.txt', command);
        return { exitCode: 2, output: 'done\n' };
      },
    });
    const r = await run(s, 'exec', { command: 'make', trackChanges: true });
    expect(r).toMatchObject({ status: 'failed', exitCode: 2, output: 'done\n', filesChanged: ['b.txt'] });
    const changes = await run(s, 'changes', {});
    expect(changes.data).toEqual({ kind: 'changes', files: [{ path: 'b.txt', status: 'added' }] });
  });

  it('cuts an output over the cap to its head and tail, as the daemon does', async () => {
    const s = new MemorySandbox({ exec: () => ({ output: 'a'.repeat(100) + 'b'.repeat(100) }) });
    const input = { command: 'x' };
    const r = await s.invoke('exec', input, {
      approval: { id: 'e', actionHash: actionHash({ name: 'exec', input }), by: 'policy' },
      outputCap: 50,
    });
    expect(r).toMatchObject({ truncated: true, bytes: 200 });
    expect(r.output).toBe(`${'a'.repeat(25)}\n[… 150 bytes omitted …]\n${'b'.repeat(25)}`);
  });
});
