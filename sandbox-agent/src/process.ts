import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { HeadTailBuffer } from './capture';

export interface ProcessOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  outputCap: number;
  signal: AbortSignal;
  /** Streamed output, already decoded; called until `streamCap` bytes were sent. */
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
  streamCap?: number;
  stdin?: string;
  /** Run as this user (with no supplementary groups and no capabilities); default: the daemon's own. */
  user?: { uid: number; gid: number };
}

export interface ProcessOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** stdout and stderr interleaved as they arrived, head and tail kept. */
  output: string;
  stdout: string;
  bytes: number;
  stdoutBytes: number;
  stderrBytes: number;
  truncated: boolean;
  spawnError?: string;
}

/** After the main process exits, how long its pipes may stay open before the group is killed. */
const EXIT_GRACE_MS = 200;

/**
 * Runs a program as the leader of a new process group and makes sure nothing of it outlives the
 * call: on timeout, on cancel, and after the leader exits, the whole group gets SIGKILL. (A
 * background child that inherited stdout would otherwise keep the call open forever.)
 */
export function runProcess(file: string, args: string[], opts: ProcessOptions): Promise<ProcessOutcome> {
  return new Promise((resolve) => {
    const combined = new HeadTailBuffer(opts.outputCap);
    const stdoutOnly = new HeadTailBuffer(opts.outputCap);
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let streamed = 0;
    const streamCap = opts.streamCap ?? 0;
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let leaderExit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

    const child = spawn(file, args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      ...(opts.user ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
      stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });

    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already gone.
      }
    };

    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);
    let graceTimer: NodeJS.Timeout | undefined;

    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    if (opts.signal.aborted) onAbort();
    else opts.signal.addEventListener('abort', onAbort, { once: true });

    const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    const take = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      combined.push(chunk);
      if (stream === 'stdout') {
        stdoutBytes += chunk.length;
        stdoutOnly.push(chunk);
      } else stderrBytes += chunk.length;
      if (opts.onOutput && streamed < streamCap) {
        const part = chunk.subarray(0, streamCap - streamed);
        streamed += part.length;
        const text = decoders[stream].write(part);
        if (text) opts.onOutput(stream, text);
      }
    };
    child.stdout?.on('data', take('stdout'));
    child.stderr?.on('data', take('stderr'));
    if (opts.stdin !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(opts.stdin);
    }

    const finish = (spawnError?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      opts.signal.removeEventListener('abort', onAbort);
      killGroup();
      resolve({
        exitCode: leaderExit?.code ?? null,
        signal: leaderExit?.signal ?? null,
        timedOut,
        aborted,
        output: combined.text(),
        stdout: stdoutOnly.text(),
        bytes: combined.total,
        stdoutBytes,
        stderrBytes,
        truncated: combined.truncated,
        ...(spawnError === undefined ? {} : { spawnError }),
      });
    };

    child.on('error', (e) => finish(e.message));
    child.on('exit', (code, signal) => {
      leaderExit = { code, signal };
      // Leftover group members holding the pipes open: give output a moment to drain, then end them.
      graceTimer = setTimeout(() => {
        killGroup();
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, EXIT_GRACE_MS);
    });
    child.on('close', () => finish());
  });
}
