import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxDriver, Sandbox } from '@gatehouse/orchestrator';
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
});
