import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, credsAuthenticator } from 'nats';
import { newId, poolIdentitySubject } from '@gatehouse/shared';
import { LABEL, poolBootstrapCreds, reapOrphans, type SandboxDriver } from '@gatehouse/orchestrator';
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

/** ESTABLISHED (01) TCP connections to NATS's port 4222 (0x107E) in a sandbox's network namespace. */
async function natsConnections(s: Parameters<typeof rootExec>[1]): Promise<number> {
  const tcp = await rootExec(driver, s, ['cat', '/proc/net/tcp', '/proc/net/tcp6']);
  expect(tcp.exitCode).toBe(0);
  return tcp.output.split('\n').filter((l) => /:107E 01 /.test(l)).length;
}

let driver: SandboxDriver;

describe('warm pool', () => {
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

  it('a pooled sandbox holds no run and no credentials of a run before its claim', async () => {
    const waiting = await pooledContainers(driver, stateDir);
    expect(waiting.length).toBe(2);
    for (const c of waiting) {
      const info = await driver.docker.getContainer(c.Id).inspect();
      expect(info.Config.Env.join('\n')).not.toMatch(/GATEHOUSE_RUN_ID|CREDS|SU[A-Z2-7]{56}/);
      const sbx = { info: { containerId: c.Id } } as Parameters<typeof rootExec>[1];
      // Its one-time user was read and deleted: only the empty marker that followed it stays.
      const state = await rootExec(driver, sbx, ['ls', '-A', '/var/gatehouse']);
      expect(state.output.trim().split(/\s+/)).toEqual(['identity.json.ready']);
      // One connection to NATS's port 4222 (0x107E), ESTABLISHED (01): the one-time user's.
      expect(await natsConnections(sbx)).toBe(1);
    }
  });

  it("a pooled sandbox's one-time user gets only its own identity: another cannot read or steal it", async () => {
    const [first, second] = (await pooledContainers(driver, stateDir)).map((c) => c.Labels[LABEL.sandbox]!);
    // The one-time user the second sandbox holds (minted alike, as isolation.test.ts does for run users).
    const asSecond = await connect({
      servers: driver.nats.url,
      authenticator: credsAuthenticator(
        new TextEncoder().encode(await poolBootstrapCreds(driver.nats.identity, second!)),
      ),
    });
    const errors: string[] = [];
    void (async () => {
      for await (const s of asSecond.status())
        if (String(s.type) === 'error') errors.push(typeof s.data === 'string' ? s.data : JSON.stringify(s.data));
    })();
    try {
      const received: string[] = [];
      const denied: string[] = [];
      const subjects = [poolIdentitySubject(first!), 'gh._pool.*.identity', 'gh.>', '>'];
      for (const subject of subjects)
        asSecond.subscribe(subject, {
          callback: (err, msg) => (err ? denied.push(subject) : received.push(msg.subject)),
        });
      // Control: its own subject is allowed (and hears what is sent there).
      const own: string[] = [];
      asSecond.subscribe(poolIdentitySubject(second!), { callback: (_e, m) => own.push(m.subject) });
      await asSecond.flush();
      driver.nc.publish(poolIdentitySubject(first!), new TextEncoder().encode('{"not":"an identity"}'));
      driver.nc.publish(poolIdentitySubject(second!), new TextEncoder().encode('{}'));
      // Nor may it publish a forged identity to the first one.
      asSecond.publish(poolIdentitySubject(first!), new TextEncoder().encode('forged'));
      await asSecond.flush();
      await new Promise((r) => setTimeout(r, 1200));
      expect(received).toEqual([]);
      expect(denied.sort()).toEqual([...subjects].sort());
      expect(own).toEqual([poolIdentitySubject(second!)]);
      expect(errors).toContain('PERMISSIONS_VIOLATION');
    } finally {
      await asSecond.close();
    }
    // The first sandbox got a message that is no identity: it refused it and is gone, never offered.
    await until('the sandbox that got a bad identity is gone', async () =>
      (await pooledContainers(driver, stateDir)).every(
        (c) => c.Labels[LABEL.sandbox] !== first || c.State !== 'running',
      ),
    );
    await until(
      'the pool refilled',
      async () =>
        (await pooledContainers(driver, stateDir)).filter((c) => c.State === 'running').length === 2 &&
        driver.pool!.available(driver.images.sandbox) === 2,
    );
  }, 120_000);

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
    // The identity came over NATS, never onto the disk; the one-time user's file was deleted when read.
    const state = await rootExec(driver, a, ['ls', '-A', '/var/gatehouse']);
    // (Its empty marker, identity.json.ready, stays: it holds nothing.)
    expect(state.output.split(/\s+/)).not.toContain('identity.json');
    // Bound: connected as the run's user, the one-time user's connection dropped.
    await until('one NATS connection left', async () => (await natsConnections(a)) === 1, 10_000);
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
