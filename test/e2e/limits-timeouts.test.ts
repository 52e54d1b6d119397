import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { run, sh, startDriver } from '../support/sandbox';
import { settleUntilGone, isSleep, timed, startLimitedSandbox } from '../support/limits';

/**
 * Runaway commands in a real sandbox: children left behind at a timeout, cancellation, and a grep
 * that would run forever.
 */

describe('sandbox limits', () => {
  let driver: SandboxDriver;
  /** Shared by the leftover-process, cancel and grep tests. */
  let sandbox: Sandbox;

  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await startLimitedSandbox(driver);
  });
  afterAll(async () => {
    await driver?.close();
  });

  describe('leftover processes', () => {
    it.each([
      ['a background child', 'sleep 300 & sleep 300'],
      ['a double fork', '(sleep 301 &) ; sleep 302'],
      ['a child that ignores SIGTERM', "trap '' TERM; sleep 304 & sleep 305"],
    ])('kills %s on timeout, and nothing of it is left', async (_what, command) => {
      const { value: r, ms } = await timed(() => run(sandbox, 'exec', { command }, { timeoutMs: 1_500 }));
      expect(r.status).toBe('timeout');
      expect(r.error?.code).toBe('timeout');
      expect(ms).toBeLessThan(6_000);
      expect(await settleUntilGone(sandbox, isSleep)).toEqual([]);
    });

    it('returns promptly when the command exits but a background child still holds stdout', async () => {
      const { value: r, ms } = await timed(() =>
        run(sandbox, 'exec', { command: 'sleep 303 & echo done' }, { timeoutMs: 30_000 }),
      );
      expect(r.status).toBe('ok');
      expect(r.exitCode).toBe(0);
      expect(r.output).toBe('done\n');
      expect(ms).toBeLessThan(5_000);
      expect(await settleUntilGone(sandbox, isSleep)).toEqual([]);
    });
  });

  describe('cancel', () => {
    it('aborts a running command and kills its process group', async () => {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), 300);
      const { value: r, ms } = await timed(() =>
        run(sandbox, 'exec', { command: 'sleep 60; echo never' }, { timeoutMs: 30_000, signal: ac.signal }),
      );
      clearTimeout(timer);
      expect(r.status).toBe('aborted');
      expect(r.error?.code).toBe('cancelled');
      expect(r.output).not.toContain('never');
      expect(ms).toBeLessThan(3_000);
      expect(await settleUntilGone(sandbox, isSleep)).toEqual([]);
    });
  });

  describe('grep timeout', () => {
    beforeAll(async () => {
      // ~20 MB of long lines of a's, each ending in "xb": every line is a candidate for a pattern
      // ending in b, so the regex engine (not just a literal scan) has to look at all of them.
      const line = `${'a'.repeat(88)}xb`;
      await sh(
        sandbox,
        `mkdir -p gen && yes ${line} | head -c 20000000 > gen/big.txt && test $(stat -c %s gen/big.txt) = 20000000`,
      );
    });

    it('returns within its timeout for a pathological-looking ERE (GNU grep runs it as a DFA)', async () => {
      const { value: r, ms } = await timed(() =>
        run(sandbox, 'grep', { pattern: '(a|aa)*b', path: 'gen' }, { timeoutMs: 1_000 }),
      );
      console.info(
        `[limits] grep (a|aa)*b over 20 MB: status ${r.status} in ${ms} ms, bytes ${r.bytes}, truncated ${r.truncated}`,
      );
      expect(['ok', 'timeout']).toContain(r.status);
      expect(ms).toBeLessThan(3_000);
    });

    it('kills grep at the timeout for a pattern that really backtracks (a backreference)', async () => {
      const { value: r, ms } = await timed(() =>
        run(sandbox, 'grep', { pattern: '^(a|aa)*\\1b', path: 'gen' }, { timeoutMs: 1_000 }),
      );
      console.info(`[limits] grep ^(a|aa)*\\1b over 20 MB: status ${r.status} in ${ms} ms`);
      expect(r.status).toBe('timeout');
      expect(r.error?.code).toBe('timeout');
      expect(ms).toBeLessThan(3_000);
      expect(await settleUntilGone(sandbox, (p) => p.comm === 'grep')).toEqual([]);
    });
  });
});
