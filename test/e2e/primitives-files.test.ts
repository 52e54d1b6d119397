import { describe, expect, it } from 'vitest';
import { run, sh } from '../support/sandbox';
import { LINES, FILES, sha256, dataOf, useSandbox, catFile } from '../support/primitives';

/** Behaviour of read_file, write_file and edit_file, against a real sandbox. */

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
