import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reapOrphans, SandboxLostError, type Sandbox, type SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, run, sh, startDriver } from '../support/sandbox';

const cli = fileURLToPath(new URL('../../orchestrator/bin/gatehouse.mjs', import.meta.url));

function lostWithin(sandbox: Sandbox, ms: number): Promise<{ error: SandboxLostError; afterMs: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox not reported lost within ${ms} ms`)), ms);
    sandbox.onLost((error) => {
      clearTimeout(timer);
      resolve({ error, afterMs: Date.now() - started });
    });
  });
}

describe('sandbox lifecycle', () => {
  let driver: SandboxDriver;
  beforeAll(async () => {
    driver = await startDriver();
  });
  afterAll(async () => driver?.close());

  it('reports a killed container as lost, and fails the call in flight with that reason', async () => {
    const sandbox = await driver.createSandbox({ runId: 'run_killed' });
    const lost = lostWithin(sandbox, 5000);
    // Settled into a value at once: the call fails the moment the loss is detected.
    const inFlight = run(sandbox, 'exec', { command: 'sleep 30' }, { timeoutMs: 60_000 }).then(
      () => 'resolved',
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 300));
    await driver.docker.getContainer(sandbox.info.containerId).kill();
    const { error } = await lost;
    expect(error).toBeInstanceOf(SandboxLostError);
    expect(error.reason).toMatch(/container died \(exit code 137/);
    expect(await inFlight).toBeInstanceOf(SandboxLostError);
    await expect(run(sandbox, 'exec', { command: 'true' })).rejects.toBeInstanceOf(SandboxLostError);
    await sandbox.destroy();
  });

  it('reports a sandbox whose heartbeats stop (frozen container) as lost', async () => {
    const sandbox = await driver.createSandbox({ runId: 'run_frozen' });
    const container = driver.docker.getContainer(sandbox.info.containerId);
    const lost = lostWithin(sandbox, driver.lostAfterMs + 5000);
    await container.pause();
    try {
      const { error } = await lost;
      expect(error.reason).toMatch(/no heartbeat for \d+ ms/);
    } finally {
      await container.unpause();
      await sandbox.destroy();
    }
  });

  it(
    'does not call a live sandbox lost because the orchestrator itself was stalled (a slow fsync, a long ' +
      'sync step)',
    async () => {
      const sandbox = await driver.createSandbox({ runId: 'run_stalled' });
      let lost: string | undefined;
      sandbox.onLost((e) => (lost = e.reason));
      try {
        // Block this process longer than the loss threshold: heartbeats keep arriving, but sit unread
        // in the socket, and timers run before I/O when the loop wakes up.
        const until = Date.now() + driver.lostAfterMs + 1000;
        while (Date.now() < until) {
          /* stalled */
        }
        await new Promise((r) => setTimeout(r, 3 * driver.heartbeatMs));
        expect(lost).toBeUndefined();
        expect((await run(sandbox, 'exec', { command: 'echo alive' })).output).toContain('alive');
      } finally {
        await sandbox.destroy();
      }
    },
  );

  it('does not call a sandbox it destroyed itself lost, and removes its container, network and volumes', async () => {
    const sandbox = await driver.createSandbox({ runId: 'run_destroyed', repoDir: makeRepo() });
    let lost = false;
    sandbox.onLost(() => (lost = true));
    const volumes = (await driver.docker.getContainer(sandbox.info.containerId).inspect()).Mounts.map((m) => m.Name);
    expect(volumes).toHaveLength(2);
    await sandbox.destroy();
    await new Promise((r) => setTimeout(r, 1500));
    expect(lost).toBe(false);
    await expect(driver.docker.getContainer(sandbox.info.containerId).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
    await expect(driver.docker.getNetwork(sandbox.info.networkId).inspect()).rejects.toMatchObject({ statusCode: 404 });
    for (const v of volumes)
      await expect(driver.docker.getVolume(v!).inspect()).rejects.toMatchObject({ statusCode: 404 });
  });

  it('reaps the sandbox of an orchestrator that was killed, and leaves live ones alone', async () => {
    const mine = await driver.createSandbox({ runId: 'run_live' });
    const child = spawn(process.execPath, [cli, 'sandbox', 'up', '--repo', makeRepo()], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('gatehouse sandbox up printed nothing within 60 s')), 60_000);
      createInterface({ input: child.stdout }).once('line', (l) => {
        clearTimeout(timer);
        resolve(l);
      });
      child.once('exit', (code) => reject(new Error(`gatehouse sandbox up exited with ${code}`)));
    });
    const orphan = JSON.parse(line) as { containerId: string; networkId: string; pid: number; runId: string };
    expect(orphan.pid).toBe(child.pid);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // The orchestrator is dead; its sandbox is still there until someone reaps it.
    expect((await driver.docker.getContainer(orphan.containerId).inspect()).State.Running).toBe(true);

    // Only this test's orphan: a reap of every dead orchestrator's sandboxes would take other test
    // files' crashed runs, which they reap (and salvage) themselves.
    const report = await reapOrphans(driver.docker, false, { runId: orphan.runId });
    expect(report.containers).toHaveLength(1);
    expect(report.networks).toHaveLength(1);
    await expect(driver.docker.getContainer(orphan.containerId).inspect()).rejects.toMatchObject({ statusCode: 404 });
    await expect(driver.docker.getNetwork(orphan.networkId).inspect()).rejects.toMatchObject({ statusCode: 404 });
    // Ours belongs to a live process: untouched and still serving.
    expect((await sh(mine, 'echo alive')).trim()).toBe('alive');
    await mine.destroy();
  });
});
