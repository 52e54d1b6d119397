import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvocationResult } from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { run, startDriver } from '../support/sandbox';
import {
  sleep,
  settleUntilGone,
  isSleep,
  PIDS_EVENTS,
  cgroupCounter,
  timed,
  startLimitedSandbox,
} from '../support/limits';

/** A fork bomb in a real sandbox, contained by the pids limit. */

describe('sandbox limits', () => {
  let driver: SandboxDriver;
  /** Its own sandbox, since exhausting a limit could disturb others. */
  let bombBox: Sandbox;

  beforeAll(async () => {
    driver = await startDriver();
    bombBox = await startLimitedSandbox(driver);
  });
  afterAll(async () => {
    await driver?.close();
  });

  describe('fork bomb', () => {
    it('is contained by the pids limit and killed with its process group; the daemon keeps serving', async () => {
      const inspect = await driver.docker.getContainer(bombBox.info.containerId).inspect();
      expect(inspect.HostConfig.PidsLimit).toBe(64);
      const refusedBefore = await cgroupCounter(bombBox, PIDS_EVENTS, 'max');

      // The trailing sleep keeps the leader alive, so the bomb runs until the timeout (without it
      // the leader returns at once and the group is killed 200 ms later, before the limit is hit).
      const bomb = ':(){ :|:& };:; sleep 30';
      let r: InvocationResult | undefined;
      let thrown: unknown;
      const { ms } = await timed(async () => {
        try {
          r = await run(bombBox, 'exec', { command: bomb }, { timeoutMs: 5_000 });
        } catch (e) {
          thrown = e;
        }
      });
      console.info(
        `[limits] fork bomb: ` +
          `${r ? `status ${r.status}, exit ${r.exitCode}, signal ${r.signal}` : `threw ${String(thrown)}`} after ` +
          `${ms} ms`,
      );
      expect(thrown).toBeUndefined();
      expect(['timeout', 'failed']).toContain(r!.status);
      expect(ms).toBeLessThan(15_000);

      // The daemon answers again once the bomb's processes are gone (bounded retry: until then a
      // spawn may fail for want of pids).
      const deadline = Date.now() + 10_000;
      let alive: InvocationResult | undefined;
      let tries = 0;
      while (tries < 20 && Date.now() < deadline) {
        tries++;
        alive = await run(bombBox, 'exec', { command: 'echo alive' }, { timeoutMs: 2_000 }).catch(() => undefined);
        if (alive?.status === 'ok') break;
        await sleep(250);
      }
      expect(alive?.status).toBe('ok');
      expect(alive?.output).toBe('alive\n');
      const read = await run(bombBox, 'read_file', { path: 'README.md' });
      expect(read.status).toBe('ok');
      expect(read.output).toBe('# fixture\n');
      const left = await settleUntilGone(bombBox, (p) => p.args.includes(bomb) || isSleep(p));
      const refusedAfter = await cgroupCounter(bombBox, PIDS_EVENTS, 'max');
      console.info(
        `[limits] fork bomb: forks refused by the pids limit: ${refusedAfter - refusedBefore}; daemon answered on ` +
          `try ${tries}; bomb processes left: ${left.length}`,
      );
      // The pids limit was actually reached, and nothing of the bomb survived the group kill.
      expect(refusedAfter).toBeGreaterThan(refusedBefore);
      expect(left).toEqual([]);
      expect(bombBox.lost).toBeUndefined();
    });
  });
});
