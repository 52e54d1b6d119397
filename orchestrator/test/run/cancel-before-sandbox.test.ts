import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunLog } from '../../src/events/store';
import { createPolicy, emptyPolicy, loadShellClassifier } from '../../src/policy/index';
import { ScriptedProvider } from '../../src/providers/scripted';
import { DEFAULT_BUDGETS } from '../../src/run/budgets';
import { runAgent } from '../../src/run/session';
import type { SandboxDriver } from '../../src/sandbox/index';

/**
 * Ctrl-C while the run's environment is made: the step it interrupted fails with whatever error it
 * throws, and the run must end cancelled (exit 130), not as a setup or sandbox failure (exit 5, 1).
 */
describe('a run cancelled before its sandbox is ready', () => {
  it.each([
    ['the sandbox could not start', 'invocation cancelled before it was sent'],
    ['docker refused', 'connect ECONNREFUSED /var/run/docker.sock'],
  ])('ends cancelled when %s after the signal', async (_what, message) => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-cancel-'));
    const ac = new AbortController();
    const driver = {
      createSandbox: () => {
        ac.abort();
        return Promise.reject(new Error(message));
      },
    } as unknown as SandboxDriver;
    const classifier = await loadShellClassifier();
    const r = await runAgent({
      task: 't',
      repoDir: mkdtempSync(path.join(os.tmpdir(), 'gh-cancel-repo-')),
      stateDir,
      provider: new ScriptedProvider({ turns: [{ final: 'never asked' }] }, 'scripted:test'),
      driver,
      policy: createPolicy(emptyPolicy(classifier), 'sandboxed-auto', classifier),
      budgets: DEFAULT_BUDGETS,
      apply: false,
      signal: ac.signal,
    });
    expect(r).toMatchObject({ status: 'cancelled', stopReason: 'cancelled' });
    const events = RunLog.readEvents(stateDir, r.runId);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'cancelled' } });
    expect(events.some((e) => e.type === 'model.request')).toBe(false);
  });

  it('a sandbox that fails with no cancel is still a sandbox failure', async () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-cancel-'));
    const driver = {
      createSandbox: () => Promise.reject(new Error('no space left on device')),
    } as unknown as SandboxDriver;
    const classifier = await loadShellClassifier();
    const r = await runAgent({
      task: 't',
      repoDir: mkdtempSync(path.join(os.tmpdir(), 'gh-cancel-repo-')),
      stateDir,
      provider: new ScriptedProvider({ turns: [{ final: 'never asked' }] }, 'scripted:test'),
      driver,
      policy: createPolicy(emptyPolicy(classifier), 'sandboxed-auto', classifier),
      budgets: DEFAULT_BUDGETS,
      apply: false,
      signal: new AbortController().signal,
    });
    expect(r).toMatchObject({ status: 'failed', stopReason: 'sandbox_failed: no space left on device' });
  });
});
