import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@gatehouse/shared';
import { LABEL, reapOrphans, type SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, rootExec, sh, startDriver } from '../support/sandbox';

/** Polls `ok` every 100 ms for at most `ms`; fails with `what` if it never holds. */
async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Pooled containers labelled with `stateDir` that no run has claimed: labels cannot change, so a
 * claimed one is told apart by its claim record on the host.
 */
async function pooledContainers(driver: SandboxDriver, stateDir: string) {
  const all = await driver.docker.listContainers({ all: true, filters: { label: [LABEL.pool] } });
  return all.filter(
    (c) =>
      c.Labels[LABEL.state] === stateDir &&
      !existsSync(path.join(stateDir, 'pool-claims', `${c.Labels[LABEL.sandbox]}.json`)),
  );
}

describe('warm pool', () => {
  let driver: SandboxDriver;
  let stateDir: string;
  const tags: string[] = [];

  beforeAll(async () => {
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-pool-state-'));
    driver = await startDriver({ warmPool: { size: 2 }, stateDir });
    await driver.pool!.fill();
  }, 180_000);

  afterAll(async () => {
    await driver?.close();
    for (const t of tags) execFileSync('docker', ['rmi', t], { stdio: 'ignore' });
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('a pooled sandbox holds no run, no credentials and no NATS connection before its claim', async () => {
    const waiting = await pooledContainers(driver, stateDir);
    expect(waiting.length).toBe(2);
    for (const c of waiting) {
      const info = await driver.docker.getContainer(c.Id).inspect();
      expect(info.Config.Env.join('\n')).not.toMatch(/GATEHOUSE_RUN_ID|CREDS|SU[A-Z2-7]{56}/);
      const sbx = { info: { containerId: c.Id } } as Parameters<typeof rootExec>[1];
      const state = await rootExec(driver, sbx, ['ls', '-A', '/var/gatehouse']);
      expect(state.output.trim()).toBe('');
      // No TCP connection in the sandbox's network namespace to NATS's port 4222 (0x107E).
      const tcp = await rootExec(driver, sbx, ['cat', '/proc/net/tcp', '/proc/net/tcp6']);
      expect(tcp.exitCode).toBe(0);
      expect(tcp.output).not.toMatch(/:107E\s/);
    }
  });

  it('a claim binds the run: it serves on the run subjects, the claim is recorded, no two runs share one', async () => {
    const before = (await pooledContainers(driver, stateDir)).map((c) => c.Id);
    const repo = makeRepo({ 'hello.txt': 'from the host\n' });
    const a = await driver.createSandbox({ runId: newId('run'), repoDir: repo });
    const b = await driver.createSandbox({ runId: newId('run'), repoDir: repo });
    expect(a.info.timings.claim).toBeDefined();
    expect(b.info.timings.claim).toBeDefined();
    expect(before).toContain(a.info.containerId);
    expect(before).toContain(b.info.containerId);
    expect(a.info.containerId).not.toBe(b.info.containerId);
    expect((await sh(a, 'cat hello.txt')).trim()).toBe('from the host');
    expect((await sh(b, 'echo $((6*7))')).trim()).toBe('42');
    // The identity went in once and was deleted by the daemon: nothing of it stays to be read.
    const state = await rootExec(driver, a, ['ls', '-A', '/var/gatehouse']);
    // (Its empty marker, identity.json.ready, stays: it holds nothing.)
    expect(state.output.split(/\s+/)).not.toContain('identity.json');
    const claimFile = path.join(stateDir, 'pool-claims', `${a.sandboxId}.json`);
    expect(JSON.parse(execFileSync('cat', [claimFile], { encoding: 'utf8' }))).toMatchObject({
      runId: a.runId,
      containerId: a.info.containerId,
    });

    // Refilled in the background, with new containers: a claimed one never comes back.
    await until('the pool refilled', () => driver.pool!.available(driver.images.sandbox) === 2);
    const after = (await pooledContainers(driver, stateDir)).map((c) => c.Id);
    expect(after).not.toContain(a.info.containerId);
    expect(after).not.toContain(b.info.containerId);

    await a.destroy();
    await b.destroy();
    expect(existsSync(claimFile)).toBe(false);
    await expect(driver.docker.getContainer(a.info.containerId).inspect()).rejects.toMatchObject({ statusCode: 404 });
  }, 120_000);

  it('discards pooled sandboxes of an image rebuilt since they started', async () => {
    const tag = `gatehouse-test/pool-stale:${newId('t')
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')}`;
    execFileSync('docker', ['tag', driver.images.sandbox, tag]);
    tags.push(tag);
    const local = await startDriver({ warmPool: { size: 1, images: [tag] }, stateDir });
    try {
      await local.pool!.fill();
      expect(local.pool!.available(tag)).toBe(1);
      const staleId = (await pooledContainers(local, stateDir)).find((c) => c.Labels[LABEL.pool] === tag)!.Id;
      // The tag now names another build.
      execFileSync('docker', ['build', '-q', '-t', tag, '-'], {
        input: `FROM ${driver.images.sandbox}\nLABEL gatehouse.test.rebuilt=${Date.now()}\n`,
      });
      const s = await local.createSandbox({ runId: newId('run'), image: tag });
      expect(s.info.timings.claim).toBeUndefined(); // started cold
      expect(s.info.containerId).not.toBe(staleId);
      expect((await sh(s, 'echo fresh')).trim()).toBe('fresh');
      await until('the stale sandbox removed', async () =>
        local.docker
          .getContainer(staleId)
          .inspect()
          .then(
            () => false,
            () => true,
          ),
      );
      await s.destroy();
    } finally {
      await local.close();
    }
  }, 180_000);

  it('reaps the pool of a dead orchestrator: unclaimed entries removed, a claimed one saved into its run', async () => {
    // Its own state directory: the reap below takes everything labelled with it, live or not.
    const own = mkdtempSync(path.join(os.tmpdir(), 'gh-pool-reap-'));
    const local = await startDriver({ warmPool: { size: 1 }, stateDir: own });
    await local.pool!.fill();
    const s = await local.createSandbox({ runId: newId('run') });
    await until('the pool refilled', () => local.pool!.available(local.images.sandbox) === 1);
    const ids = (await pooledContainers(local, own)).map((c) => c.Id);
    expect(ids).toHaveLength(1);
    // `everything` stands in for a dead owner (its process is this one, alive).
    const report = await reapOrphans(local.docker, true, { stateDir: own, ownStateDirOnly: true });
    expect(report.containers.length).toBeGreaterThanOrEqual(2);
    for (const id of [...ids, s.info.containerId])
      await expect(local.docker.getContainer(id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    await expect(local.docker.getNetwork(s.info.networkId).inspect()).rejects.toMatchObject({ statusCode: 404 });
    // The claimed one was recognised as its run's (no log in this state dir: reported unsaved, by run id).
    expect(report.unsaved.map((u) => u.runId)).toContain(s.runId);
    expect(existsSync(path.join(own, 'pool-claims', `${s.sandboxId}.json`))).toBe(false);
    await local.close();
    // Whatever a refill started as the reap ran is this test's to remove too.
    await reapOrphans(local.docker, true, { stateDir: own, ownStateDirOnly: true });
    rmSync(own, { recursive: true, force: true });
  }, 180_000);
});
