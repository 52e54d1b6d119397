import { readFileSync } from 'node:fs';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadWorkspace,
  restoreSaved,
  saveWorkspace,
  scanWorkspace,
  SavedWorkspaceError,
  type SandboxDriver,
  type Sandbox,
} from '@gatehouse/orchestrator';
import { makeRepo, sh, startDriver } from '../support/sandbox';

/**
 * Saving a workspace goes around the daemon (git as root in a private folder, content through the
 * archive API) and comes back byte for byte, owners and modes included, in a fresh sandbox.
 */
describe('workspace save and restore (real sandbox)', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  const repo = makeRepo({
    'README.md': '# fixture\n',
    'src/a.ts': 'export const a = 1;\n',
    'old.txt': 'bye\n',
    '.gitignore': 'ignored/\n',
  });
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: 'run_wsave', repoDir: repo });
  });
  afterAll(async () => driver?.close());

  it('lists added, modified and deleted paths without the daemon, honouring .gitignore', async () => {
    await sh(
      sandbox,
      'echo changed >> src/a.ts && rm old.txt && mkdir -p new/deep && printf "x\\0y" > new/deep/bin.dat && ln -s ' +
        '../README.md new/link && printf "#!/bin/sh\\n" > run.sh && chmod 755 run.sh && mkdir ignored && echo no > ' +
        'ignored/x',
    );
    const scan = await scanWorkspace(sandbox.container);
    expect(scan.scratch).toMatch(/^\/var\/gatehouse\/scan\./);
    expect(scan.changes.map((c) => `${c.status} ${c.path}`).sort()).toEqual([
      'added new/deep/bin.dat',
      'added new/link',
      'added run.sh',
      'deleted old.txt',
      'modified src/a.ts',
    ]);
    // A second scan reuses root's folder (git's stat cache) and sees the same.
    const again = await scanWorkspace(sandbox.container, scan.scratch);
    expect(again.changes.length).toBe(5);
    // A folder the command user made cannot stand in for root's.
    // A folder a command made (it can only write /tmp and the workspace) is not a scan folder.
    await sh(sandbox, 'mkdir -p /tmp/.gatehouse-scan.forged');
    await expect(scanWorkspace(sandbox.container, '/tmp/.gatehouse-scan.forged')).rejects.toThrow(/not a scan folder/);
  });

  it('saves content by hash, reuses unchanged files, and restores them exactly in a fresh sandbox', async () => {
    const runDir = mkdtempSync(path.join(os.tmpdir(), 'gh-wsave-'));
    const first = await saveWorkspace(sandbox.container, runDir, 'one');
    const m = first.manifest;
    expect(m.deleted).toEqual(['old.txt']);
    expect(m.files.map((f) => f.path)).toEqual(['new/deep/bin.dat', 'new/link', 'run.sh', 'src/a.ts']);
    expect(m.files.find((f) => f.path === 'new/link')).toMatchObject({ kind: 'symlink', target: '../README.md' });
    expect(m.files.find((f) => f.path === 'run.sh')).toMatchObject({ kind: 'file', mode: 0o755, uid: 10001 });
    const second = await saveWorkspace(sandbox.container, runDir, 'two', { previous: m, scratch: first.scratch });
    expect(second.manifest).toEqual(m);
    await expect(loadWorkspace(runDir, second.file, second.sha256)).resolves.toEqual(m);

    const fresh = await driver.createSandbox({ runId: 'run_wsave2', repoDir: repo });
    try {
      await restoreSaved(fresh, runDir, m);
      expect(
        await sh(
          fresh,
          'cat src/a.ts; od -c new/deep/bin.dat | head -1; readlink new/link; stat -c "%a %u" run.sh; test -e ' +
            'old.txt || echo gone',
        ),
      ).toBe('export const a = 1;\nchanged\n0000000   x  \\0   y\n../README.md\n755 10001\ngone\n');
      expect(await sh(fresh, 'stat -c "%U" new new/deep')).toBe('sandbox\nsandbox\n');
      const rescan = await scanWorkspace(fresh.container);
      expect(rescan.changes.map((c) => c.path).sort()).toEqual([
        'new/deep/bin.dat',
        'new/link',
        'old.txt',
        'run.sh',
        'src/a.ts',
      ]);
    } finally {
      await fresh.destroy();
    }
  });

  it('reads a file again when its content changed though size, mode and mtime were set back', async () => {
    const runDir = mkdtempSync(path.join(os.tmpdir(), 'gh-wsave-'));
    await sh(sandbox, 'printf "version one\\n" > same.txt && touch -d "2020-01-01 00:00:00" same.txt');
    const first = await saveWorkspace(sandbox.container, runDir, 'one');
    await sh(sandbox, 'printf "version two\\n" > same.txt && touch -d "2020-01-01 00:00:00" same.txt');
    const second = await saveWorkspace(sandbox.container, runDir, 'two', {
      previous: first.manifest,
      scratch: first.scratch,
    });
    const before = first.manifest.files.find((f) => f.path === 'same.txt');
    const after = second.manifest.files.find((f) => f.path === 'same.txt');
    expect(before && after && before.kind === 'file' && after.kind === 'file' && before.size === after.size).toBe(true);
    expect(readFileSync(path.join(runDir, 'workspace/blobs', (after as { sha256: string }).sha256), 'utf8')).toBe(
      'version two\n',
    );
    await sh(sandbox, 'rm same.txt');
  });

  it('refuses a saved workspace whose manifest or content was changed or lost', async () => {
    const runDir = mkdtempSync(path.join(os.tmpdir(), 'gh-wsave-'));
    const saved = await saveWorkspace(sandbox.container, runDir, 'one');
    const file = path.join(runDir, saved.file);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('"deleted":["old.txt"]', '"deleted":[]'));
    await expect(loadWorkspace(runDir, saved.file, saved.sha256)).rejects.toThrow(/was changed after it was saved/);
    writeFileSync(file, text);
    const blob = saved.manifest.files.find((f) => f.kind === 'file' && f.path === 'src/a.ts');
    writeFileSync(path.join(runDir, 'workspace/blobs', (blob as { sha256: string }).sha256), 'tampered');
    await expect(loadWorkspace(runDir, saved.file, saved.sha256)).rejects.toBeInstanceOf(SavedWorkspaceError);
  });
});
