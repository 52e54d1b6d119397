import type { Subscription } from 'nats';
import { decodeMessage, Heartbeat, newId, sandboxSubjects } from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, sh } from './sandbox';

/**
 * Shared helpers of the limit tests (test/e2e/limits-*.test.ts). Their sandboxes get smaller
 * limits than the defaults so that exhausting them is quick and cheap.
 */

export const MiB = 1024 * 1024;
export const LIMITS = { memoryBytes: 256 * MiB, pids: 64 };
export const OUTPUT_CAP = 64 * 1024;
/** sandbox-agent's STREAM_CAP: streamed output per invocation stops there. */
export const STREAM_CAP = 16 * MiB;
export const MARKER = /\n\[… (\d+) bytes omitted …\]\n/;

export interface Proc {
  pid: number;
  comm: string;
  args: string;
}

/** The image has no ps; this lists every process of the sandbox from /proc (pid, comm, argv). */
export const LIST_PROCS =
  'for d in /proc/[0-9]*; do c=$(cat "$d/comm" 2>/dev/null) || continue; ' +
  'a=$(tr "\\0" " " < "$d/cmdline" 2>/dev/null); echo "${d#/proc/}|$c|$a"; done';

export async function processes(sandbox: Sandbox): Promise<Proc[]> {
  const out = await sh(sandbox, LIST_PROCS);
  return out
    .split('\n')
    .filter((l) => l.includes('|'))
    .map((l) => {
      const [pid = '', comm = '', ...args] = l.split('|');
      return { pid: Number(pid), comm, args: args.join('|').trim() };
    });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Polls until no process matches, bounded in tries and time (killed processes may need a moment
 * to be reaped by the container's init). Returns what still matched at the end.
 */
export async function settleUntilGone(
  sandbox: Sandbox,
  match: (p: Proc) => boolean,
  budgetMs = 3_000,
): Promise<Proc[]> {
  const deadline = Date.now() + budgetMs;
  let left: Proc[] = [];
  for (let i = 0; i < 30; i++) {
    left = (await processes(sandbox)).filter(match);
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(100);
  }
  return left;
}

export const isSleep = (p: Proc): boolean => p.comm === 'sleep';

/** cgroup v1 and v2 locations of the counters read below. */
export const PIDS_EVENTS = ['/sys/fs/cgroup/pids/pids.events', '/sys/fs/cgroup/pids.events'];
export const MEMORY_EVENTS = ['/sys/fs/cgroup/memory/memory.oom_control', '/sys/fs/cgroup/memory.events'];

/** A "key value" counter from the sandbox's own cgroup: forks refused (max), OOM kills (oom_kill). */
export async function cgroupCounter(sandbox: Sandbox, files: string[], key: string): Promise<number> {
  const out = await sh(sandbox, `cat ${files.join(' ')} 2>/dev/null; true`);
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(out);
  if (!m) throw new Error(`no ${key} counter in ${files.join(' or ')}:\n${out}`);
  return Number(m[1]);
}

export async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = Date.now();
  const value = await f();
  return { value, ms: Date.now() - t0 };
}

/** Follows a sandbox's heartbeats: the daemon's pid and RSS, and when each arrived. */
export class HeartbeatLog {
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

/** A sandbox with the small LIMITS above, on a fresh repository. */
export async function startLimitedSandbox(driver: SandboxDriver): Promise<Sandbox> {
  return driver.createSandbox({ runId: newId('run'), repoDir: makeRepo(), limits: LIMITS });
}
