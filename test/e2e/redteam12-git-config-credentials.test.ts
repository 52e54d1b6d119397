import { execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, sh, startDriver } from '../support/sandbox';

/**
 * Red team (issue 12): copy-in copies .git whole. A checkout on a CI runner keeps the job's token
 * in .git/config (actions/checkout persists `http.https://github.com/.extraheader`), and many
 * clones keep one in the remote's URL: the agent could read it with `cat .git/config`.
 */
describe('credentials in the repository git config (red team)', () => {
  let driver: SandboxDriver;
  beforeAll(async () => {
    driver = await startDriver();
  });
  afterAll(async () => driver?.close());

  it('do not reach the sandbox, while git there still works with the remote and branch settings', async () => {
    const repo = makeRepo();
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
    git('remote', 'add', 'origin', 'https://x-access-token:ghs_rt12TOKENvalue@git.example.invalid/o/r.git');
    git('config', 'http.https://git.example.invalid/.extraheader', 'AUTHORIZATION: basic cnQxMi1zZWNyZXQtaGVhZGVy');
    appendFileSync(path.join(repo, '.git', 'config'), '[sendemail]\n\tsmtppass = rt12-smtp-secret\n');
    const sandbox = await driver.createSandbox({ runId: 'run_rt12_gitcfg', repoDir: repo });
    const config = await sh(sandbox, 'cat .git/config');
    for (const secret of ['ghs_rt12TOKENvalue', 'cnQxMi1zZWNyZXQtaGVhZGVy', 'rt12-smtp-secret'])
      expect(config).not.toContain(secret);
    expect(await sh(sandbox, 'git remote get-url origin')).toBe('https://git.example.invalid/o/r.git\n');
    expect(await sh(sandbox, 'git status --porcelain; git log --format=%s')).toBe('fixture\n');
    await sandbox.destroy();
  });
});
