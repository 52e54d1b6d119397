import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@gatehouse/shared';
import { POOL_SOCKET_ENV, servePool, type PoolServer, type SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, sh, startDriver } from '../support/sandbox';

/**
 * A pool lent over its socket (sandbox/pool-link.ts), as a worker lends it to its run children: a
 * driver started with the socket in its environment claims from the other's pool.
 */
describe('a warm pool lent over its socket', () => {
  let holder: SandboxDriver;
  let borrower: SandboxDriver;
  let server: PoolServer;
  let stateDir: string;
  const refusals: string[] = [];

  beforeAll(async () => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-pool-link-'));
    holder = await startDriver({ warmPool: { size: 1 }, stateDir });
    await holder.pool!.fill();
    server = await servePool(holder.claimer!, holder.poolStateDir(), (why) => refusals.push(why));
    process.env[POOL_SOCKET_ENV] = server.socketPath;
    try {
      borrower = await startDriver({ stateDir });
    } finally {
      delete process.env[POOL_SOCKET_ENV];
    }
  }, 180_000);

  afterAll(async () => {
    await borrower?.close();
    await server?.close();
    await holder?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it("claims the holder's sandbox; another state directory or other limits: refused, cold", async () => {
    expect(borrower.pool).toBeUndefined();
    const waiting = holder.pool!.available(holder.images.sandbox);
    expect(waiting).toBe(1);
    const s = await borrower.createSandbox({ runId: newId('run'), repoDir: makeRepo({ 'a.txt': 'lent\n' }), stateDir });
    expect(refusals).toEqual([]);
    expect(s.info.timings.claim).toBeGreaterThan(0);
    expect(s.info.timings.start).toBeUndefined();
    expect((await sh(s, 'cat a.txt')).trim()).toBe('lent');
    await s.destroy();
    await expect(borrower.docker.getContainer(s.info.containerId).inspect()).rejects.toMatchObject({ statusCode: 404 });

    const other = mkdtempSync(path.join(os.tmpdir(), 'gh-pool-other-'));
    const cold = await borrower.createSandbox({ runId: newId('run'), stateDir: other });
    expect(cold.info.timings.claim).toBeUndefined();
    expect(refusals.join('\n')).toMatch(/the pool is for runs of/);
    await cold.destroy();
    rmSync(other, { recursive: true, force: true });
    // Limits other than those the pooled sandboxes were started with: cold too.
    const limited = await borrower.createSandbox({ runId: newId('run'), stateDir, limits: { pids: 99 } });
    expect(limited.info.timings.claim).toBeUndefined();
    expect(refusals.at(-1)).toMatch(/with the run's limits/);
    await limited.destroy();
  }, 120_000);
});
