import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@gatehouse/shared';
import { scanWorkspace, type Sandbox, type SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, run, sh, startDriver } from '../support/sandbox';

/**
 * Red team (issue 10, deliverable 6): the orchestrator's root scan of the workspace keeps its
 * private git directory and index in the sandbox's /tmp, the tmpfs every command can write. A
 * command that fills /tmp (and leaves the file there: nothing clears /tmp between calls) makes every
 * later scan fail, so checkpoints, reaper salvage and the verified --apply have nothing to work with.
 */
describe('red team: a full /tmp left by a command', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: newId('run'), repoDir: makeRepo() });
  });
  afterAll(async () => driver?.close());

  it("the root scan still lists the workspace's changes", async () => {
    await sh(sandbox, 'echo changed >> README.md');
    const fill = await run(
      sandbox,
      'exec',
      {
        command:
          'cat /dev/zero > /tmp/fill 2>/dev/null; i=0; while [ $i -lt 20000 ] && : > /tmp/f$i 2>/dev/null; do ' +
          'i=$((i+1)); done; df -h /tmp | tail -1',
      },
      { timeoutMs: 60_000 },
    );
    expect(fill.output).toMatch(/100%/);
    const container = driver.docker.getContainer(sandbox.info.containerId);
    let failure = '';
    let listed: string[] = [];
    try {
      listed = (await scanWorkspace(container, '', 30_000)).changes.map((c) => c.path);
    } catch (e) {
      failure = String(e);
    }
    expect(failure).toBe('');
    expect(listed).toContain('README.md');
  });
});
