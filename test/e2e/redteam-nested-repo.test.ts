import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, run, sh, startDriver } from '../support/sandbox';

/**
 * Red team (issue 10, deliverable 6): the daemon's `changes` hashes the workspace with `git add -A`
 * against its baseline. A command that runs `git init sub` (a nested repository with no commit)
 * makes that git fail ("'sub/' does not have a commit checked out; adding files failed"), so
 * `changes` fails for the rest of the run, whatever else changed.
 */
describe("red team: an empty nested repository breaks the daemon's changes", () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: newId('run'), repoDir: makeRepo() });
    await sh(sandbox, 'echo changed >> README.md && mkdir sub && git -C sub init -q && echo x > sub/f');
  });
  afterAll(async () => driver?.close());

  it('changes still lists what changed', async () => {
    const r = await run(sandbox, 'changes', {}, { timeoutMs: 30_000 });
    expect(r.status, r.error?.message).toBe('ok');
    expect(r.filesChanged).toContain('README.md');
  });
});
