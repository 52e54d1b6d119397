import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, run, sandboxUnderPolicy, startDriver } from '../support/sandbox';

/**
 * Red team (issue 10, deliverable 3): the copy leaves .git out only when a read-denied path exists in
 * the work tree (copy-in.ts anyWithheld). A secret that was committed once and deleted since (the
 * usual "removed .env, added it to .gitignore" story) is no longer in the work tree, so nothing is
 * withheld, .git is copied whole, and `git log -p` in the sandbox prints it despite
 * `deny read_file(**\/.env)`.
 */
describe('red team: withheld paths reached through the copied .git', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  let repoDir: string;
  beforeAll(async () => {
    repoDir = makeRepo({
      '.env': 'API_TOKEN=top-secret-in-history\n',
      'secrets/key.pem': 'top-secret-key-in-history\n',
      'src/a.js': 'export const a = 1;\n',
    });
    // Committed once and removed since, as people do after a leak: only history has them now.
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repoDir, stdio: 'ignore' });
    git('rm', '-rq', '.env', 'secrets');
    writeFileSync(path.join(repoDir, '.gitignore'), '.env\nsecrets/\n');
    git('add', '-A');
    git('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'remove secrets');
    driver = await startDriver();
    sandbox = await sandboxUnderPolicy(
      driver,
      repoDir,
      { deny: ['read_file(**/.env)', 'read_file(secrets/**)'] },
      path.join(repoDir, 'policy.json'),
    );
  });
  afterAll(async () => {
    await driver?.close();
    rmSync(repoDir, { recursive: true, force: true });
  });

  it('the secrets are absent from the work tree', async () => {
    const r = await run(sandbox, 'exec', { command: 'cat .env secrets/key.pem 2>&1; true' });
    expect(r.output).not.toContain('top-secret');
  });

  it('git cannot hand back what a read-denied path held in history', async () => {
    const attempts = [
      'git show HEAD~1:.env',
      'git show HEAD~1:secrets/key.pem',
      'git checkout HEAD~1 -- .env && cat .env',
      'git log --all -p',
      'git grep -h top-secret $(git rev-list --all)',
    ];
    for (const command of attempts) {
      const r = await run(sandbox, 'exec', { command: `${command} 2>&1; true` });
      expect(r.output, command).not.toContain('top-secret');
    }
  });
});
