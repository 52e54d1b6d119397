import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Subscription } from 'nats';
import { decodeMessage, Heartbeat, newId, sandboxSubjects, type InvocationResult } from '@gatehouse/shared';
import { SandboxLostError, type Sandbox, type SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, run, sh, startDriver } from '../support/sandbox';

/**
 * Resource limits and runaway commands, against real sandboxes: leftover children, output floods,
 * a fork bomb, a memory hog, cancellation and a grep that would run forever. The sandboxes get
 * smaller limits than the defaults so that exhausting them is quick and cheap.
 */

const MiB = 1024 * 1024;
const LIMITS = { memoryBytes: 256 * MiB, pids: 64 };
const OUTPUT_CAP = 64 * 1024;
/** sandbox-agent's STREAM_CAP: streamed output per invocation stops there. */
const STREAM_CAP = 16 * MiB;
const MARKER = /\n\[… (\d+) bytes omitted …\]\n/;

interface Proc {
  pid: number;
  comm: string;
  args: string;
}

/** The image has no ps; this lists every process of the sandbox from /proc (pid, comm, argv). */
const LIST_PROCS =
  'for d in /proc/[0-9]*; do c=$(cat "$d/comm" 2>/dev/null) || continue; ' +
  'a=$(tr "\\0" " " < "$d/cmdline" 2>/dev/null); echo "${d#/proc/}|$c|$a"; done';

async function processes(sandbox: Sandbox): Promise<Proc[]> {
  const out = await sh(sandbox, LIST_PROCS);
  return out
    .split('\n')
    .filter((l) => l.includes('|'))
    .map((l) => {
      const [pid = '', comm = '', ...args] = l.split('|');
      return { pid: Number(pid), comm, args: args.join('|').trim() };
    });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Polls until no process matches, bounded in tries and time (killed processes may need a moment
 * to be reaped by the container's init). Returns what still matched at the end.
 */
async function settleUntilGone(sandbox: Sandbox, match: (p: Proc) => boolean, budgetMs = 3_000): Promise<Proc[]> {
  const deadline = Date.now() + budgetMs;
  let left: Proc[] = [];
  for (let i = 0; i < 30; i++) {
    left = (await processes(sandbox)).filter(match);
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(100);
  }
  return left;
}

const isSleep = (p: Proc): boolean => p.comm === 'sleep';

/** cgroup v1 and v2 locations of the counters read below. */
const PIDS_EVENTS = ['/sys/fs/cgroup/pids/pids.events', '/sys/fs/cgroup/pids.events'];
const MEMORY_EVENTS = ['/sys/fs/cgroup/memory/memory.oom_control', '/sys/fs/cgroup/memory.events'];

/** A "key value" counter from the sandbox's own cgroup: forks refused (max), OOM kills (oom_kill). */
async function cgroupCounter(sandbox: Sandbox, files: string[], key: string): Promise<number> {
  const out = await sh(sandbox, `cat ${files.join(' ')} 2>/dev/null; true`);
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(out);
  if (!m) throw new Error(`no ${key} counter in ${files.join(' or ')}:\n${out}`);
  return Number(m[1]);
}

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = Date.now();
  const value = await f();
  return { value, ms: Date.now() - t0 };
}

/** Follows a sandbox's heartbeats: the daemon's pid and RSS, and when each arrived. */
class HeartbeatLog {
  readonly beats: { at: number; rss: number; pid: number }[] = [];
  private readonly sub: Subscription;

  constructor(driver: SandboxDriver, sandbox: Sandbox) {
    this.sub = driver.nc.subscribe(sandboxSubjects(sandbox.runId, sandbox.sandboxId).heartbeat, {
      callback: (err, msg) => {
        if (err) return;
        const hb = decodeMessage(Heartbeat, msg.data);
        if (hb.ok && this.beats.length < 10_000)
          this.beats.push({ at: Date.now(), rss: hb.value.rssBytes, pid: hb.value.pid });
      },
    });
  }

  /** The first heartbeat that arrives after `since` (bounded wait). */
  async after(since: number, timeoutMs = 5_000): Promise<{ at: number; rss: number; pid: number }> {
    const deadline = Date.now() + timeoutMs;
    for (let i = 0; i < 200 && Date.now() < deadline; i++) {
      const hb = this.beats.find((b) => b.at > since);
      if (hb) return hb;
      await sleep(50);
    }
    throw new Error(`no heartbeat within ${timeoutMs} ms`);
  }

  maxRssBetween(from: number, to: number): number {
    return Math.max(0, ...this.beats.filter((b) => b.at >= from && b.at <= to).map((b) => b.rss));
  }

  stop(): void {
    this.sub.unsubscribe();
  }
}

describe('sandbox limits', () => {
  let driver: SandboxDriver;
  /** Shared by the leftover-process, flood, cancel and grep tests. */
  let sandbox: Sandbox;
  /** Each of these gets its own sandbox, since exhausting a limit could disturb the others. */
  let bombBox: Sandbox;
  let hogBox: Sandbox;
  let heartbeats: HeartbeatLog;
  let hogHeartbeats: HeartbeatLog;

  beforeAll(async () => {
    driver = await startDriver();
    const repoDir = makeRepo();
    const runId = newId('run');
    [sandbox, bombBox, hogBox] = await Promise.all([
      driver.createSandbox({ runId, repoDir, limits: LIMITS }),
      driver.createSandbox({ runId, repoDir, limits: LIMITS }),
      driver.createSandbox({ runId, repoDir, limits: LIMITS }),
    ]);
    heartbeats = new HeartbeatLog(driver, sandbox);
    hogHeartbeats = new HeartbeatLog(driver, hogBox);
  });
  afterAll(async () => {
    heartbeats?.stop();
    hogHeartbeats?.stop();
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

  describe('fork bomb', () => {
    it('is contained by the pids limit and killed with its process group; the daemon keeps serving', async () => {
      const inspect = await driver.docker.getContainer(bombBox.info.containerId).inspect();
      expect(inspect.HostConfig.PidsLimit).toBe(64);
      const refusedBefore = await cgroupCounter(bombBox, PIDS_EVENTS, 'max');

      // The trailing sleep keeps the leader alive, so the bomb runs until the timeout (without it
      // the leader returns at once and the group is killed 200 ms later, before the limit is hit).
      const bomb = ':(){ :|:& };:; sleep 30';
      let r: InvocationResult | undefined;
      let thrown: unknown;
      const { ms } = await timed(async () => {
        try {
          r = await run(bombBox, 'exec', { command: bomb }, { timeoutMs: 5_000 });
        } catch (e) {
          thrown = e;
        }
      });
      console.info(
        `[limits] fork bomb: ` +
          `${r ? `status ${r.status}, exit ${r.exitCode}, signal ${r.signal}` : `threw ${String(thrown)}`} after ` +
          `${ms} ms`,
      );
      expect(thrown).toBeUndefined();
      expect(['timeout', 'failed']).toContain(r!.status);
      expect(ms).toBeLessThan(15_000);

      // The daemon answers again once the bomb's processes are gone (bounded retry: until then a
      // spawn may fail for want of pids).
      const deadline = Date.now() + 10_000;
      let alive: InvocationResult | undefined;
      let tries = 0;
      while (tries < 20 && Date.now() < deadline) {
        tries++;
        alive = await run(bombBox, 'exec', { command: 'echo alive' }, { timeoutMs: 2_000 }).catch(() => undefined);
        if (alive?.status === 'ok') break;
        await sleep(250);
      }
      expect(alive?.status).toBe('ok');
      expect(alive?.output).toBe('alive\n');
      const read = await run(bombBox, 'read_file', { path: 'README.md' });
      expect(read.status).toBe('ok');
      expect(read.output).toBe('# fixture\n');
      const left = await settleUntilGone(bombBox, (p) => p.args.includes(bomb) || isSleep(p));
      const refusedAfter = await cgroupCounter(bombBox, PIDS_EVENTS, 'max');
      console.info(
        `[limits] fork bomb: forks refused by the pids limit: ${refusedAfter - refusedBefore}; daemon answered on ` +
          `try ${tries}; bomb processes left: ${left.length}`,
      );
      // The pids limit was actually reached, and nothing of the bomb survived the group kill.
      expect(refusedAfter).toBeGreaterThan(refusedBefore);
      expect(left).toEqual([]);
      expect(bombBox.lost).toBeUndefined();
    });
  });

  describe('memory hog', () => {
    it('is OOM-killed inside the sandbox and the daemon survives', async () => {
      const oomBefore = await cgroupCounter(hogBox, MEMORY_EVENTS, 'oom_kill');
      const hog = 'node -e "const a=[];for(;;)a.push(Buffer.alloc(16*1024*1024,1))"';
      let r: InvocationResult | undefined;
      let thrown: unknown;
      const { ms } = await timed(async () => {
        try {
          r = await run(hogBox, 'exec', { command: hog }, { timeoutMs: 30_000 });
        } catch (e) {
          thrown = e;
        }
      });
      const inspect = await driver.docker.getContainer(hogBox.info.containerId).inspect();
      console.info(
        `[limits] memory hog: ` +
          `${r ? `status ${r.status}, exit ${r.exitCode}, signal ${r.signal}` : `threw ${String(thrown)}`} after ` +
          `${ms} ms; ` +
          `container running=${inspect.State.Running} OOMKilled=${inspect.State.OOMKilled}; sandbox ` +
          `lost=${hogBox.lost?.message ?? 'no'}`,
      );
      // Whatever happens must be reported, not hang.
      expect(ms).toBeLessThan(35_000);
      if (thrown !== undefined) {
        // Had the daemon itself died, the call must have failed with the sandbox reported lost.
        expect(thrown).toBeInstanceOf(SandboxLostError);
        expect(hogBox.lost).toBeDefined();
        throw new Error(`the daemon did not survive the memory hog: ${hogBox.lost?.message ?? 'unknown'}`);
      }
      expect(r!.status).toBe('failed');
      expect(r!.signal === 'SIGKILL' || r!.exitCode === 137).toBe(true);
      expect(inspect.State.Running).toBe(true);
      expect(await sh(hogBox, 'echo alive')).toBe('alive\n');
      // It was the kernel's OOM killer (the cgroup counts its kills), not a timeout or anything else.
      expect(await cgroupCounter(hogBox, MEMORY_EVENTS, 'oom_kill')).toBeGreaterThan(oomBefore);
      expect(hogBox.lost).toBeUndefined();
    });

    it('commands run with oom_score_adj 1000, the daemon with 0', async () => {
      const hb = await hogHeartbeats.after(Date.now());
      expect(await sh(hogBox, 'cat /proc/self/oom_score_adj; sh -c "cat /proc/self/oom_score_adj"')).toBe(
        '1000\n1000\n',
      );
      expect(await sh(hogBox, `cat /proc/${hb.pid}/oom_score_adj`)).toBe('0\n');
    });

    it('kills workers that are each smaller than the daemon, not the daemon', async () => {
      // Six processes of 40 MiB each (dd's buffer, touched by every read) overrun the 256 MiB limit
      // together while each is smaller than the daemon: by size alone the daemon would be chosen.
      const daemon = await hogHeartbeats.after(Date.now());
      const oomBefore = await cgroupCounter(hogBox, MEMORY_EVENTS, 'oom_kill');
      const workers = 'for i in 1 2 3 4 5 6; do dd if=/dev/zero of=/dev/null bs=40M count=20 2>/dev/null & done; wait';
      let r: InvocationResult | undefined;
      let thrown: unknown;
      const { ms } = await timed(async () => {
        try {
          r = await run(hogBox, 'exec', { command: workers }, { timeoutMs: 30_000 });
        } catch (e) {
          thrown = e;
        }
      });
      const killed = r?.output.match(/Killed/g)?.length ?? 0;
      console.info(
        `[limits] 6 × 40 MiB workers with the daemon at ${(daemon.rss / MiB).toFixed(1)} MiB RSS: ` +
          `${r ? `status ${r.status}, ${killed} workers killed` : `threw ${String(thrown)}`} after ${ms} ms; sandbox ` +
          `lost=${hogBox.lost?.message ?? 'no'}`,
      );
      expect(ms).toBeLessThan(35_000);
      expect(thrown).toBeUndefined();
      expect(daemon.rss).toBeGreaterThan(40 * MiB);
      expect(killed).toBeGreaterThanOrEqual(1);
      expect(await cgroupCounter(hogBox, MEMORY_EVENTS, 'oom_kill')).toBeGreaterThan(oomBefore);
      expect(await sh(hogBox, 'echo alive')).toBe('alive\n');
      expect((await hogHeartbeats.after(Date.now())).pid).toBe(daemon.pid);
      expect(hogBox.lost).toBeUndefined();
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
