import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';

/** The file descriptor a worker's run child watches: when it closes, the worker is gone. */
export const WORKER_LINK_FD = 3;

export interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last event the run printed (`run.completed` or `run.paused` when it got that far). */
  last?: { type: string; data: Record<string, unknown> };
  /** The end of what it wrote on stderr, for the reason a run did not start. */
  stderrTail: string;
}

export interface RunningChild {
  child: ChildProcess;
  done: Promise<ChildOutcome>;
}

/**
 * Starts `gatehouse run|resume … --json` as a child of the worker. The child gets a pipe on fd 3
 * on which the worker beats every `linkMs / 3`: when the worker dies (even by SIGKILL) the pipe
 * closes, and when it is stopped or starved (SIGSTOP, a frozen VM) the beats stop; either way the
 * child kills itself (cli/worker-link.ts), within `linkMs` for a silent link. With `linkMs` under
 * the lease TTL minus one renewal, no run goes on once its lease can have passed to another worker.
 * Its events come back on stdout; only the last one is kept.
 */
export function startRunChild(cli: string, args: string[], env: NodeJS.ProcessEnv, linkMs: number): RunningChild {
  const child = spawn(process.execPath, [cli, ...args], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    env: {
      ...env,
      CI: 'true',
      GATEHOUSE_WORKER_LINK: String(WORKER_LINK_FD),
      GATEHOUSE_WORKER_LINK_MS: String(linkMs),
    },
  });
  const link = child.stdio[WORKER_LINK_FD] as Writable;
  link.on('error', () => undefined); // the child gone: its close settles `done`
  const beat = setInterval(() => link.write('.'), Math.max(50, Math.floor(linkMs / 3)));
  beat.unref();
  child.on('close', () => clearInterval(beat));
  let last: ChildOutcome['last'];
  let stderrTail = '';
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    try {
      const e = JSON.parse(line) as { type?: unknown; data?: unknown };
      if (typeof e.type === 'string' && typeof e.data === 'object' && e.data !== null)
        last = { type: e.type, data: e.data as Record<string, unknown> };
    } catch {
      // Not an event line: ignored (the log, not stdout, is the record).
    }
  });
  child.stderr!.on('data', (b: Buffer) => {
    stderrTail = (stderrTail + b.toString('utf8')).slice(-4000);
  });
  const done = new Promise<ChildOutcome>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, ...(last ? { last } : {}), stderrTail }));
    child.on('error', (e) => resolve({ code: null, signal: null, stderrTail: `could not start: ${e.message}` }));
  });
  return { child, done };
}
