import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '@gatehouse/shared';
import { docker, SandboxError } from '@gatehouse/orchestrator';
import { createRunNetwork, NO_ADDRESS_POOL_LEFT } from '../../orchestrator/src/sandbox/network';
import { makeRepo, startDriver } from '../support/sandbox';

/**
 * Every sandbox has a network of its own, and the engine gives each one a range from its default
 * address pools. This test takes every range the engine has left (it runs alone: vitest.config.ts),
 * then asks for a sandbox: the answer must name the limit and the fix, not Docker's words alone.
 */
const FILLER_LABEL = 'gatehouse.test.address-pools';
const FILLER = `${FILLER_LABEL}=${process.pid}`;
/** More than an engine at Docker's defaults has (31); an engine given more fails the test, saying so. */
const AT_MOST = 200;

async function removeFillers(): Promise<void> {
  const d = docker();
  const nets = await d.listNetworks({ filters: { label: [FILLER] } });
  for (const n of nets) await d.getNetwork(n.Id).remove();
}

afterAll(removeFillers);

describe('an engine with no address range left for another network', () => {
  it('refuses a sandbox saying what the limit is and how to raise it; takes one once ranges are free', async () => {
    const d = docker();
    const driver = await startDriver();
    try {
      // The one network the driver made ahead (not refilled: driver.ts) is spent first, so that each
      // later sandbox needs a new one.
      const first = await driver.createSandbox({ runId: newId('run'), repoDir: makeRepo() });
      await first.destroy();

      let made = 0;
      let refusal = '';
      for (; made < AT_MOST && !refusal; made++) {
        await d
          .createNetwork({
            Name: `gatehouse-test-fill-${process.pid}-${made}`,
            Internal: true,
            Labels: { [FILLER_LABEL]: String(process.pid) },
          })
          .catch((e: unknown) => (refusal = (e as Error).message));
      }
      console.log(`the engine gave ${made - 1} more networks before refusing: ${refusal}`);
      expect(refusal, `the engine still had room after ${AT_MOST} networks`).not.toBe('');

      const sandboxId = newId('sbx');
      const direct = await createRunNetwork(d, sandboxId, {}).then(
        () => 'made',
        (e: unknown) => e,
      );
      expect(direct).toBeInstanceOf(SandboxError);
      expect((direct as Error).message).toBe(NO_ADDRESS_POOL_LEFT);

      const refused = await driver.createSandbox({ runId: newId('run'), repoDir: makeRepo() }).then(
        () => 'started',
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(SandboxError);
      expect((refused as Error).message).toContain('no address range left');
      expect((refused as Error).message).toContain('default-address-pools');

      // The ranges given back: a sandbox starts again.
      await removeFillers();
      const again = await driver.createSandbox({ runId: newId('run'), repoDir: makeRepo() });
      await again.destroy();
    } finally {
      await driver.close();
    }
  }, 180_000);
});
