import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PrimitiveError } from '../src/errors';
import { Workspace } from '../src/workspace';

/** The containment logic against a real file system (a temp directory stands in for /workspace). */
describe('Workspace.resolve', () => {
  let ws: Workspace;
  let outside: string;
  beforeAll(async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'gh-ws-'));
    outside = mkdtempSync(path.join(os.tmpdir(), 'gh-outside-'));
    writeFileSync(path.join(outside, 'secret'), 'secret');
    mkdirSync(path.join(root, 'src'));
    writeFileSync(path.join(root, 'src', 'a.ts'), 'a');
    symlinkSync(outside, path.join(root, 'out-link'));
    symlinkSync(path.join(root, 'src'), path.join(root, 'in-link'));
    symlinkSync(path.join(outside, 'missing'), path.join(root, 'dangling'));
    ws = await Workspace.open(root);
  });

  const code = async (p: string) =>
    ws.resolve(p).then(
      () => 'ok',
      (e: PrimitiveError) => e.code,
    );

  it('resolves paths inside, normalising . and ..', async () => {
    expect((await ws.resolve('./src/../src/a.ts')).rel).toBe('src/a.ts');
    expect((await ws.resolve(path.join(ws.root, 'src/a.ts'))).rel).toBe('src/a.ts');
    expect(await ws.resolve('new/dir/file.txt')).toMatchObject({ rel: 'new/dir/file.txt', exists: false });
    expect((await ws.resolve('in-link/a.ts')).rel).toBe('src/a.ts');
  });

  it('reads `..` lexically: link/../x is the workspace file x, never the kernel path through the link', async () => {
    // The daemon opens the normalised path, so what it touches is inside whatever the link points to.
    expect(await ws.resolve('out-link/../src/a.ts')).toMatchObject({
      rel: 'src/a.ts',
      real: path.join(ws.root, 'src/a.ts'),
    });
  });

  it.each(['../x', '/etc/passwd', 'src/../../x', 'out-link/secret', 'out-link', 'out-link/new-file'])(
    'refuses %s',
    async (p) => {
      expect(await code(p)).toBe('path_outside_workspace');
    },
  );

  it('refuses NUL bytes, over-long components and dangling links', async () => {
    expect(await code('a\0b')).toBe('invalid_path');
    expect(await code('x'.repeat(256))).toBe('invalid_path');
    expect(await code('dangling')).toBe('invalid_path');
  });
});
