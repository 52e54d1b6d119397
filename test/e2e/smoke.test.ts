import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxError, type SandboxDriver, type Sandbox } from '@gatehouse/orchestrator';
import { makeRepo, run, sh, startDriver } from '../support/sandbox';

describe('sandbox smoke', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: 'run_smoke', repoDir: makeRepo() });
  });
  afterAll(async () => driver?.close());

  it('copies the repository in with .git, so git works inside', async () => {
    expect(await sh(sandbox, 'git log --format=%s')).toBe('fixture\n');
    expect(await sh(sandbox, 'git status --porcelain')).toBe('');
    const read = await run(sandbox, 'read_file', { path: 'src/a.ts' });
    expect(read.status).toBe('ok');
    expect(read.output).toBe('export const a = 1;\n');
  });

  it('exports changes too big for NATS through the archive API', async () => {
    // ~6.7 MB of text: over the 4 MiB a diff may carry over NATS.
    await sh(
      sandbox,
      'head -c 5000000 /dev/urandom | base64 > big.txt && mkdir -p out/deep && echo hi > out/deep/x.txt',
    );
    const changes = await sandbox.changes();
    expect(changes.truncated).toBe(true);
    expect(changes.diff).toBe('');
    expect(changes.files.map((f) => f.path).sort()).toEqual(['big.txt', 'out/deep/x.txt']);

    const dest = mkdtempSync(path.join(os.tmpdir(), 'gh-export-'));
    await sandbox.exportFiles(
      changes.files.map((f) => f.path),
      dest,
    );
    const inside = (await sh(sandbox, 'sha256sum big.txt')).split(' ')[0];
    expect(
      createHash('sha256')
        .update(readFileSync(path.join(dest, 'big.txt')))
        .digest('hex'),
    ).toBe(inside);
    expect(readFileSync(path.join(dest, 'out/deep/x.txt'), 'utf8')).toBe('hi\n');
  });

  it('kills what a command started outside its process group (setsid) once no call is in flight', async () => {
    await sh(sandbox, 'setsid sleep 301 >/dev/null 2>&1 < /dev/null & echo started');
    const left = await sh(sandbox, 'cat /proc/[0-9]*/comm 2>/dev/null | sort | uniq -c');
    expect(left).not.toMatch(/\bsleep\b/);
  });

  it('refuses to export paths outside the workspace', async () => {
    const dest = mkdtempSync(path.join(os.tmpdir(), 'gh-export-'));
    await expect(sandbox.exportFiles(['../etc/passwd'], dest)).rejects.toBeInstanceOf(SandboxError);
    await expect(sandbox.exportFiles(['/etc/passwd'], dest)).rejects.toBeInstanceOf(SandboxError);
  });
});
