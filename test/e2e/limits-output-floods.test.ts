import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { run, sh, startDriver } from '../support/sandbox';
import { MiB, OUTPUT_CAP, STREAM_CAP, MARKER, HeartbeatLog, startLimitedSandbox } from '../support/limits';

/** Output floods in a real sandbox: capped, counted, and the daemon does not grow. */

describe('sandbox limits', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  let heartbeats: HeartbeatLog;

  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await startLimitedSandbox(driver);
    heartbeats = new HeartbeatLog(driver, sandbox);
  });
  afterAll(async () => {
    heartbeats?.stop();
    await driver?.close();
  });

  describe('output floods', () => {
    it(
      'keeps head and tail of a 200 MB flood, counts every byte, ' + 'caps the stream, and the daemon does not grow',
      async () => {
        const first = await heartbeats.after(Date.now());
        // The heartbeat's pid is the daemon's in the sandbox's pid namespace.
        expect(await sh(sandbox, `tr '\\0' ' ' < /proc/${first.pid}/cmdline`)).toContain('/opt/gatehouse/agent.mjs');
        const start = Date.now();

        // 1. A bounded 200 MB flood: finishes on its own.
        let streamed = 0;
        let chunks = 0;
        const yes = await run(
          sandbox,
          'exec',
          { command: 'yes gatehouse | head -c 200000000' },
          {
            timeoutMs: 50_000,
            outputCap: OUTPUT_CAP,
            onOutput: (c) => {
              streamed += Buffer.byteLength(c.data);
              chunks++;
            },
          },
        );
        expect(yes.status).toBe('ok');
        expect(yes.truncated).toBe(true);
        expect(yes.bytes).toBeGreaterThanOrEqual(200_000_000);
        const m = MARKER.exec(yes.output);
        expect(m).not.toBeNull();
        expect(Buffer.byteLength(yes.output)).toBeLessThanOrEqual(OUTPUT_CAP + Buffer.byteLength(m![0]));
        const [head = '', tail = ''] = yes.output.split(m![0]);
        expect(Number(m![1])).toBe(yes.bytes - Buffer.byteLength(head) - Buffer.byteLength(tail));
        expect(head.startsWith('gatehouse\ngatehouse\n')).toBe(true);
        expect(tail.endsWith('gatehouse\ngatehouse\n')).toBe(true);
        expect(Buffer.byteLength(head)).toBe(OUTPUT_CAP / 2);
        expect(Buffer.byteLength(tail)).toBe(OUTPUT_CAP / 2);
        // Streaming stops at the stream cap (chunks already in flight when it was reached excepted).
        expect(streamed).toBeGreaterThan(0);
        expect(streamed).toBeLessThanOrEqual(STREAM_CAP + OUTPUT_CAP);

        // 2. An endless flood, ended by the timeout.
        let streamed2 = 0;
        const rnd = await run(
          sandbox,
          'exec',
          { command: 'cat /dev/urandom | base64' },
          { timeoutMs: 2_000, outputCap: OUTPUT_CAP, onOutput: (c) => (streamed2 += Buffer.byteLength(c.data)) },
        );
        expect(rnd.status).toBe('timeout');
        expect(rnd.truncated).toBe(true);
        expect(rnd.bytes).toBeGreaterThan(OUTPUT_CAP);
        const m2 = MARKER.exec(rnd.output);
        expect(m2).not.toBeNull();
        expect(Buffer.byteLength(rnd.output)).toBeLessThanOrEqual(OUTPUT_CAP + Buffer.byteLength(m2![0]));
        const [head2 = '', tail2 = ''] = rnd.output.split(m2![0]);
        expect(head2).toMatch(/^[A-Za-z0-9+/\n]+$/);
        expect(tail2).toMatch(/^[A-Za-z0-9+/\n]+$/);
        expect(Number(m2![1])).toBe(rnd.bytes - Buffer.byteLength(head2) - Buffer.byteLength(tail2));
        expect(streamed2).toBeLessThanOrEqual(STREAM_CAP + OUTPUT_CAP);

        const end = Date.now();
        const last = await heartbeats.after(end);
        const peak = Math.max(heartbeats.maxRssBetween(start, end), last.rss);
        console.info(
          `[limits] daemon pid ${first.pid}: RSS ${(first.rss / MiB).toFixed(1)} MiB before, peak ` +
            `${(peak / MiB).toFixed(1)} MiB during, ` +
            `${(last.rss / MiB).toFixed(1)} MiB after; 200 MB flood: bytes=${yes.bytes}, streamed ${streamed} B in ` +
            `${chunks} chunks; ` +
            `urandom flood: bytes=${rnd.bytes}, streamed ${streamed2} B`,
        );
        expect(last.pid).toBe(first.pid);
        expect(last.rss - first.rss).toBeLessThan(64 * MiB);
        expect(peak - first.rss).toBeLessThan(64 * MiB);
      },
    );
  });
});
