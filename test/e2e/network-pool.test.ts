import { afterAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { ownerLabel } from '@gatehouse/shared';
import { docker, LABEL, type SandboxDriver } from '@gatehouse/orchestrator';
import { waitFor } from '../support/queue-cli';
import { makeRepo, sh, startDriver } from '../support/sandbox';

/**
 * Run networks made ahead for cold starts (network-pool.ts): a cold sandbox takes a ready one (its
 * sandbox id is the network's), and the pool makes the next once that sandbox has started, never
 * handing one network to two sandboxes.
 */

const taken = new Set<string>();
/** What the driver warned about: a network made ahead that went bad, a pool that failed to fill. */
const warnings: string[] = [];
const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });

/**
 * This process's networks made ahead and not yet taken (by sandbox id): a network keeps the labels
 * it was made with, so one taken still has no run label; the ids of sandboxes started are left out.
 * A network is listed from its creation, before NATS is attached and its holder started (either of
 * which can fail, and the pool then makes another): it counts as ready once its holder runs.
 */
async function readyNetworks(): Promise<string[]> {
  const d = docker();
  const nets = await d.listNetworks({
    filters: { label: [`${LABEL.role}=run-network`, `${LABEL.owner}=${ownerLabel()}`] },
  });
  const running = new Set(
    (await d.listContainers({ filters: { label: [`${LABEL.role}=network-holder`], status: ['running'] } })).map(
      (c) => c.Labels[LABEL.sandbox],
    ),
  );
  return nets
    .filter((n) => !n.Labels?.[LABEL.run])
    .map((n) => n.Labels![LABEL.sandbox]!)
    .filter((id) => !taken.has(id) && running.has(id));
}

/** This process's network holders (network-holder.ts), in any state. */
async function holders(): Promise<string[]> {
  const list = await docker().listContainers({
    all: true,
    filters: { label: [`${LABEL.role}=network-holder`, `${LABEL.owner}=${ownerLabel()}`] },
  });
  return list.map((c) => c.Names[0] ?? c.Id);
}

describe('networks made ahead', () => {
  let driver: SandboxDriver | undefined;
  afterAll(async () => {
    await driver?.close();
  });

  it('a cold start takes the ready network; the next is made behind it; each goes to one sandbox', async () => {
    driver = await startDriver({ networks: 1, log });
    expect(await waitFor(async () => (await readyNetworks()).length === 1, 30_000, 100), warnings.join('')).toBe(true);
    const [first] = await readyNetworks();
    const a = await driver.createSandbox({ runId: 'run_netpool_a', repoDir: makeRepo() });
    expect(a.sandboxId).toBe(first);
    taken.add(a.sandboxId);
    // Made once the sandbox that took the last one started: another id, not the taken one.
    expect(await waitFor(async () => (await readyNetworks()).length === 1, 30_000, 100), warnings.join('')).toBe(true);
    const [second] = await readyNetworks();
    expect(second).not.toBe(first);
    const b = await driver.createSandbox({ runId: 'run_netpool_b', repoDir: makeRepo() });
    expect(b.sandboxId, warnings.join('')).toBe(second);
    taken.add(b.sandboxId);
    expect(await sh(a, 'echo a; echo b')).toBe('a\nb\n');
    await a.destroy();
    await b.destroy();
    await driver.close();
    driver = undefined;
    // close() removes the network made behind the second sandbox, unused, and every holder goes
    // with its network: the two taken ones' and the unused one's.
    expect(await readyNetworks()).toEqual([]);
    expect(await holders()).toEqual([]);
    // Every network and holder was made at the first try (a holder's start that died in runc's init
    // would show here: network-holder.ts).
    expect(warnings).toEqual([]);
  }, 120_000);

  it('a holder stopped while its network waits: the start goes on without it, and nothing is left', async () => {
    driver = await startDriver({ networks: 1, log });
    expect(await waitFor(async () => (await readyNetworks()).length === 1, 30_000, 100), warnings.join('')).toBe(true);
    const [ahead] = await readyNetworks();
    await docker().getContainer(`gatehouse-nethold-${ahead}`).stop({ t: 0 });
    const c = await driver.createSandbox({ runId: 'run_netpool_c', repoDir: makeRepo() });
    expect(c.sandboxId).not.toBe(ahead);
    expect(warnings.join('')).toMatch(/starting a sandbox on a network made ahead failed .*; once more without/);
    taken.add(c.sandboxId);
    expect(await sh(c, 'echo c')).toBe('c\n');
    await c.destroy();
    await driver.close();
    driver = undefined;
    expect(await readyNetworks()).toEqual([]);
    // The stopped holder went too, though it was no longer on its network.
    expect(await holders()).toEqual([]);
  }, 120_000);
});
