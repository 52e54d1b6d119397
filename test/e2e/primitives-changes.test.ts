import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, run, sh } from '../support/sandbox';
import { FILES, dataOf, hostDirs, useSandbox } from '../support/primitives';

/** The changes a sandbox reports, as a patch that applies to the original repository, against a real sandbox. */

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
