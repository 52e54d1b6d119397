import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, run, sandboxUnderPolicy, sh, startDriver } from '../support/sandbox';

/**
 * When the repository's .git is copied and when a fresh one stands in (copy-in.ts, git-history.ts):
 * history is kept when nothing in it can hold a withheld path, and withheld when something could —
 * a matching path anywhere reachable, or any unreachable object (its path cannot be known).
 * redteam-git-history.test.ts covers a secret deleted from the work tree but still in history.
 */
const POLICY = { deny: ['read_file(**/.env)'] };

describe('git history in the sandbox under read-deny rules', () => {
  let driver: SandboxDriver;
  const dirs: string[] = [];
  beforeAll(async () => {
    driver = await startDriver();
  });
  afterAll(async () => {
    await driver?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function sandboxFor(repoDir: string) {
    dirs.push(repoDir);
    return sandboxUnderPolicy(driver, repoDir, POLICY);
  }

  it('keeps the history when nothing in it matches and nothing is unreachable', async () => {
    const sandbox = await sandboxFor(makeRepo({ 'src/a.js': 'export const a = 1;\n' }));
    expect(sandbox.info.freshRepository).toBe(false);
    expect((await sh(sandbox, 'git log --format=%s')).trim()).toBe('fixture');
  });

  it('withholds the history when an unreachable object exists, naming why', async () => {
    const repoDir = makeRepo({ 'src/a.js': 'export const a = 1;\n' });
    // `git add .env` then `git rm --cached .env` leaves exactly this: a blob nothing reaches.
    execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: repoDir, input: 'API_TOKEN=top-secret-dangling\n' });
    const sandbox = await sandboxFor(repoDir);
    expect(sandbox.info.freshRepository).toBe(true);
    expect(sandbox.info.freshRepositoryReason).toMatch(/unreachable objects/);
    const r = await run(sandbox, 'exec', {
      command: 'git fsck --lost-found 2>&1; cat .git/lost-found/other/* 2>&1; git log --all --format=%s; true',
    });
    expect(r.output).not.toContain('top-secret');
  });

  it('withholds every .git when a nested repository is present (its objects are not checked)', async () => {
    const repoDir = makeRepo({ 'src/a.js': 'export const a = 1;\n', 'vendor/lib/x.js': 'x\n' });
    execFileSync('git', ['init', '-q'], { cwd: path.join(repoDir, 'vendor', 'lib') });
    const sandbox = await sandboxFor(repoDir);
    expect(sandbox.info.freshRepository).toBe(true);
    expect(sandbox.info.freshRepositoryReason).toMatch(/vendor\/lib\/\.git is a nested repository/);
    expect((await run(sandbox, 'exec', { command: 'ls -a vendor/lib' })).output).not.toMatch(/^\.git$/m);
  });

  it('withholds the history when a stash holds a matching path', async () => {
    const repoDir = makeRepo({ 'src/a.js': 'export const a = 1;\n', '.gitignore': 'nothing\n' });
    writeFileSync(path.join(repoDir, '.env'), 'API_TOKEN=top-secret-stashed\n');
    execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'stash', 'push', '-u', '-q'], { cwd: repoDir });
    const sandbox = await sandboxFor(repoDir);
    expect(sandbox.info.freshRepository).toBe(true);
    expect(sandbox.info.freshRepositoryReason).toMatch(/holds \.env/);
    const r = await run(sandbox, 'exec', { command: 'git stash list -p 2>&1; git log --all -p 2>&1; true' });
    expect(r.output).not.toContain('top-secret');
  });
});
