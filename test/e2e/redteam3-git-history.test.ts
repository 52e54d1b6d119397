import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, run, sandboxUnderPolicy, startDriver } from '../support/sandbox';

/**
 * Red team 3, against the history check (git-history.ts, copy-in.ts): with `deny read_file(**\/.env)`
 * and no .env in the work tree, the repository's .git is copied when nothing in it "can hold" a
 * withheld path. Two object stores it does not look at still hand the secret back in the sandbox:
 *  - history hidden by a replace ref (`git replace --graft`, a common way to cut old history):
 *    rev-list follows the replacement, so the original commit's tree is never walked, and fsck
 *    (which ignores replacements) finds it reachable, so nothing is "unreachable" either;
 *  - a removed submodule's repository, left in .git/modules/<name> by `git rm sub` (git keeps it):
 *    a separate object store that neither rev-list nor fsck of the parent reads;
 *  - Git LFS's store (.git/lfs/objects), which holds file content raw.
 */
const POLICY = { deny: ['read_file(**/.env)'] };
const ID = ['-c', 'user.email=t@t', '-c', 'user.name=t', '-c', 'protocol.file.allow=always'];

describe('red team 3: object stores the history check does not read', () => {
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

  it('a commit hidden behind `git replace --graft` does not bring a deleted .env into the sandbox', async () => {
    const repoDir = makeRepo({ 'src/a.js': 'export const a = 1;\n', '.env': 'API_TOKEN=top-secret-grafted\n' });
    const git = (...args: string[]) => execFileSync('git', [...ID, ...args], { cwd: repoDir, stdio: 'ignore' });
    git('rm', '-q', '.env');
    git('commit', '-qm', 'drop the secret');
    // Cut the old history off: the tip becomes a root commit by replacement; the old commit stays.
    git('replace', '--graft', 'HEAD');
    // A fresh clone's reflog holds only its tip; expiring the reflog stands in for that here.
    git('reflog', 'expire', '--expire=now', '--all');
    const sandbox = await sandboxFor(repoDir);
    const r = await run(sandbox, 'exec', {
      command:
        'git --no-replace-objects log --all -p 2>&1; git cat-file --batch-all-objects --batch 2>&1 | head -c ' +
        '20000; true',
    });
    expect(r.output).not.toContain('top-secret-grafted');
  });

  it("a removed submodule's repository in .git/modules does not bring its .env into the sandbox", async () => {
    const upstream = makeRepo({ 'lib.js': 'x\n', '.env': 'API_TOKEN=top-secret-submodule\n' });
    dirs.push(upstream);
    const repoDir = makeRepo({ 'src/a.js': 'export const a = 1;\n' });
    const git = (...args: string[]) => execFileSync('git', [...ID, ...args], { cwd: repoDir, stdio: 'ignore' });
    git('submodule', 'add', '-q', upstream, 'vendor/lib');
    git('commit', '-qm', 'add lib');
    // `git rm` of a submodule removes its work tree and gitlink but keeps .git/modules/vendor/lib.
    git('rm', '-q', 'vendor/lib');
    git('commit', '-qm', 'drop lib');
    // (In the sandbox the kept repository's core.worktree names vendor/lib, so the command makes it.)
    const sandbox = await sandboxFor(repoDir);
    const r = await run(sandbox, 'exec', {
      command: 'mkdir -p vendor/lib; git --git-dir=.git/modules/vendor/lib log --all -p 2>&1; true',
    });
    expect(r.output).not.toContain('top-secret-submodule');
  });

  it('a Git LFS object left in .git/lfs after the file left history does not come into the sandbox', async () => {
    const repoDir = makeRepo({ 'src/a.js': 'export const a = 1;\n' });
    // What git-lfs keeps of a once-tracked `.env` after a history rewrite removed it: the raw
    // content, named by its sha256, outside the object store that rev-list and fsck read.
    const oid = createHash('sha256').update('API_TOKEN=top-secret-lfs\n').digest('hex');
    const dir = path.join(repoDir, '.git', 'lfs', 'objects', oid.slice(0, 2), oid.slice(2, 4));
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, oid), 'API_TOKEN=top-secret-lfs\n');
    const sandbox = await sandboxFor(repoDir);
    const r = await run(sandbox, 'exec', { command: 'cat .git/lfs/objects/*/*/* 2>&1; true' });
    expect(r.output).not.toContain('top-secret-lfs');
  });
});
