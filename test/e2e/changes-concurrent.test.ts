import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, rootExec, run, startDriver } from '../support/sandbox';

/**
 * Sub-agents started side by side each export their parent's workspace with `changes` at the same
 * moment. Those calls must not share a git index: they did, and all but one failed on git's index
 * lock, failing their children's handoffs (found as an intermittent CI failure of the delegation suite).
 */
describe('changes called concurrently', () => {
  let driver: SandboxDriver;
  beforeAll(async () => {
    driver = await startDriver();
  });
  afterAll(async () => driver?.close());

  it('every one of several simultaneous calls succeeds with the same answer', async () => {
    const sandbox = await driver.createSandbox({ runId: 'run_changes_concurrent', repoDir: makeRepo() });
    try {
      await run(sandbox, 'write_file', { path: 'src/new.ts', content: 'export const n = 1;\n' });
      for (let round = 0; round < 3; round++) {
        const results = await Promise.all(Array.from({ length: 6 }, () => run(sandbox, 'changes', {})));
        for (const r of results) {
          expect(r.status, r.output).toBe('ok');
          expect(r.filesChanged).toEqual(['src/new.ts']);
          expect(r.output).toBe(results[0]!.output);
        }
      }
      // Each call's index is its own and is removed after it: only the baseline's stays.
      const left = await rootExec(driver, sandbox, ['sh', '-c', 'ls /var/gatehouse | grep index']);
      expect(left.output.trim().split('\n')).toEqual(['baseline.index']);
    } finally {
      await sandbox.destroy();
    }
  });
});
