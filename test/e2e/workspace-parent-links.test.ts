import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  restoreSaved,
  saveWorkspace,
  type Sandbox,
  type SandboxDriver,
  type WorkspaceManifest,
} from '@gatehouse/orchestrator';
import { makeRepo, sh, startDriver } from '../support/sandbox';

/** Runs a command as root in the container (the test's own look at what only root can see). */
function asRoot(sandbox: Sandbox, script: string): string {
  return execFileSync('docker', ['exec', '-u', '0', sandbox.container.id, 'sh', '-c', script], { encoding: 'utf8' });
}

/**
 * Docker's archive API resolves every folder on a path as root inside the container, links
 * included. A workspace folder the command replaced by a link to /var/gatehouse (root's, 0700)
 * must not let a save read root's files into the run's folder, nor a restore write into it.
 */
describe('saving and restoring never goes through a link in a parent folder (real sandbox)', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  const repo = makeRepo({
    'README.md': '# fixture\n',
    'a/invoke.pub': 'decoy\n',
    'a/protect.json': '{}\n',
    'b/keep.txt': 'k\n',
  });
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: 'run_plinks', repoDir: repo });
  });
  afterAll(async () => driver?.close());

  it('does not read a root-only file through a folder replaced by a link', async () => {
    // A root-only file in the daemon's state directory, named like one of the repository's under
    // `a` (a cold sandbox's binding comes on stdin and leaves no protect.json there of its own).
    asRoot(
      sandbox,
      'printf \'{"secret":"root-only-7f3a"}\' > /var/gatehouse/protect.json && chmod 600 /var/gatehouse/protect.json',
    );
    const secret = asRoot(sandbox, 'cat /var/gatehouse/protect.json');
    expect(secret.length).toBeGreaterThan(10);
    // The command user cannot read it itself.
    expect(await sh(sandbox, 'cat /var/gatehouse/protect.json 2>/dev/null || echo denied')).toBe('denied\n');
    await sh(sandbox, 'rm -rf a && ln -s /var/gatehouse a && echo changed > b/keep.txt');
    const runDir = mkdtempSync(path.join(os.tmpdir(), 'gh-plinks-'));
    const saved = await saveWorkspace(sandbox.container, runDir, 'one');
    const m = saved.manifest;
    expect(m.files.filter((f) => f.path.startsWith('a/'))).toEqual([]);
    expect(m.files.find((f) => f.path === 'a')).toMatchObject({ kind: 'symlink', target: '/var/gatehouse' });
    expect(m.files.find((f) => f.path === 'b/keep.txt')).toMatchObject({ kind: 'file' });
    expect(m.deleted.sort()).toEqual(['a/invoke.pub', 'a/protect.json']);
    const blobs = path.join(runDir, 'workspace/blobs');
    for (const b of readdirSync(blobs)) expect(readFileSync(path.join(blobs, b), 'utf8')).not.toBe(secret);
  });

  it('refuses a manifest with entries under one of its links, and writes nothing through it', async () => {
    const runDir = mkdtempSync(path.join(os.tmpdir(), 'gh-plinks-'));
    const content = 'planted by a crafted manifest\n';
    const sha = createHash('sha256').update(content).digest('hex');
    mkdirSync(path.join(runDir, 'workspace/blobs'), { recursive: true });
    writeFileSync(path.join(runDir, 'workspace/blobs', sha), content);
    const manifest: WorkspaceManifest = {
      v: 1,
      files: [
        { path: 'c', kind: 'symlink', target: '/var/gatehouse', uid: 10001 },
        { path: 'c/x', kind: 'file', sha256: sha, size: content.length, mode: 0o644, uid: 10001 },
      ],
      deleted: [],
      skipped: [],
    };
    const fresh = await driver.createSandbox({ runId: 'run_plinks2', repoDir: repo });
    try {
      await expect(restoreSaved(fresh, runDir, manifest)).rejects.toThrow(/under c, which it saves as a symbolic link/);
      expect(asRoot(fresh, 'test -e /var/gatehouse/x && echo written || echo absent')).toBe('absent\n');
    } finally {
      await fresh.destroy();
    }
  });

  it('refuses to restore under a folder that is a link in the fresh sandbox', async () => {
    const linked = makeRepo({ 'README.md': '# fixture\n' });
    execFileSync(
      'sh',
      ['-c', 'ln -s /var/gatehouse lnk && git add lnk && git -c user.name=t -c user.email=t@t commit -qm link'],
      { cwd: linked },
    );
    const runDir = mkdtempSync(path.join(os.tmpdir(), 'gh-plinks-'));
    const content = 'through a committed link\n';
    const sha = createHash('sha256').update(content).digest('hex');
    mkdirSync(path.join(runDir, 'workspace/blobs'), { recursive: true });
    writeFileSync(path.join(runDir, 'workspace/blobs', sha), content);
    const manifest: WorkspaceManifest = {
      v: 1,
      files: [{ path: 'lnk/y', kind: 'file', sha256: sha, size: content.length, mode: 0o644, uid: 10001 }],
      deleted: [],
      skipped: [],
    };
    const fresh = await driver.createSandbox({ runId: 'run_plinks3', repoDir: linked });
    try {
      // Copy-in no longer brings a link leading outside the repository (it says so); the link is
      // made in the fresh sandbox instead, where a command could have made it.
      expect(fresh.info.copyNotices).toContain('lnk -> /var/gatehouse points outside the repository; not copied');
      asRoot(fresh, 'ln -s /var/gatehouse /workspace/lnk');
      expect(await sh(fresh, 'readlink lnk')).toBe('/var/gatehouse\n');
      await expect(restoreSaved(fresh, runDir, manifest)).rejects.toThrow(/lnk is a symbolic link in the sandbox/);
      expect(asRoot(fresh, 'test -e /var/gatehouse/y && echo written || echo absent')).toBe('absent\n');
    } finally {
      await fresh.destroy();
    }
  });
});
