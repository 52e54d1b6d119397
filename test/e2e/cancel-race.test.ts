import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cancel, encodeMessage, sandboxSubjects } from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { invocation, makeRepo, rootExec, run, sendRaw, startDriver } from '../support/sandbox';

/**
 * A run interrupted the moment a call is sent cancels a call the daemon has not started yet: the
 * invocation may still wait for the last sweep, or sit behind the cancel in one socket read. That
 * cancel was dropped and the call ran to its end (`sleep 60` outliving a cancelled sub-agent tree,
 * an intermittent CI failure). A signed cancel now stops its call whichever arrives first.
 */
describe('a cancel that arrives before its invocation runs', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: 'run_cancel_race', repoDir: makeRepo() });
  });
  afterAll(async () => {
    await sandbox?.destroy();
    await driver?.close();
  });

  const cancelOf = (invocationId: string, opts: { sign: boolean }): Uint8Array => {
    const message = { v: 1 as const, runId: sandbox.runId, sandboxId: sandbox.sandboxId, invocationId, reason: 'test' };
    const signature = opts.sign ? sandbox.sign(message) : 'A'.repeat(86) + '==';
    return encodeMessage(Cancel, { ...message, signature });
  };
  const subjects = () => sandboxSubjects(sandbox.runId, sandbox.sandboxId);

  it('a signed cancel sent first stops the call as it starts, and nothing runs', async () => {
    const inv = invocation(sandbox, 'exec', { command: 'touch /workspace/ran; sleep 30' });
    driver.nc.publish(subjects().cancel, cancelOf(String(inv.invocationId), { sign: true }));
    await driver.nc.flush();
    const started = Date.now();
    const result = await sendRaw(driver, sandbox, inv);
    expect(result.status).toBe('aborted');
    expect(result.error).toMatchObject({ code: 'cancelled' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await rootExec(driver, sandbox, ['ls', '/workspace/ran'])).exitCode).not.toBe(0);
  });

  it('a cancel right behind its invocation, in the same flush, stops it', async () => {
    // An exec first leaves a sweep owed, so the next call waits for it before it starts.
    await run(sandbox, 'exec', { command: 'true' });
    const inv = invocation(sandbox, 'exec', { command: 'sleep 30' });
    const reply = sendRaw(driver, sandbox, inv);
    driver.nc.publish(subjects().cancel, cancelOf(String(inv.invocationId), { sign: true }));
    const result = await reply;
    expect(result.status).toBe('aborted');
  });

  it('an unsigned cancel sent first is ignored: the call runs', async () => {
    const inv = invocation(sandbox, 'exec', { command: 'echo ran' });
    driver.nc.publish(subjects().cancel, cancelOf(String(inv.invocationId), { sign: false }));
    await driver.nc.flush();
    const result = await sendRaw(driver, sandbox, inv);
    expect(result.status).toBe('ok');
    expect(result.output).toBe('ran\n');
  });
});
