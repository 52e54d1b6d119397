import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ChildEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The end of what the child wrote on stderr: why a run did not start. */
  stderrTail: string;
}

export interface ChildOptions {
  /** Each event the child prints (`--json`): for progress notifications. */
  onEvent?: (e: { type: string; data: Record<string, unknown> }) => void;
  /** Aborted (the call was cancelled, the server is stopping): the child gets SIGINT and cancels cleanly. */
  signal?: AbortSignal;
  /** Every line of its stderr, for the server's own stderr (stdout is the MCP connection's). */
  onStderr?: (line: string) => void;
}

/**
 * `gatehouse run|resume … --json` as a child process: one per run, so a run that crashes or hangs
 * never takes the MCP connection with it, and the run's stdout never reaches the server's (which
 * carries only MCP frames). Its events come back as JSON lines; the log is the record.
 */
export function runGatehouse(cli: string, args: readonly string[], o: ChildOptions = {}): Promise<ChildEnd> {
  // CI: headless whatever the server's terminal; an ask pauses the run (--on-ask pause).
  const child = spawn(process.execPath, [cli, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CI: 'true' },
  });
  const cancel = (): void => void child.kill('SIGINT');
  if (o.signal?.aborted) cancel();
  o.signal?.addEventListener('abort', cancel, { once: true });
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (!line.startsWith('{') || !o.onEvent) return;
    try {
      const e = JSON.parse(line) as { type?: unknown; data?: unknown };
      if (typeof e.type === 'string' && typeof e.data === 'object' && e.data !== null)
        o.onEvent({ type: e.type, data: e.data as Record<string, unknown> });
    } catch {
      // Not an event line: the log, not stdout, is the record.
    }
  });
  let stderrTail = '';
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderrTail = `${stderrTail}${line}\n`.slice(-4000);
    o.onStderr?.(line);
  });
  return new Promise<ChildEnd>((resolve) => {
    child.on('close', (code, signal) => {
      o.signal?.removeEventListener('abort', cancel);
      resolve({ code, signal, stderrTail });
    });
    child.on('error', (e) => resolve({ code: null, signal: null, stderrTail: `could not start: ${e.message}` }));
  });
}
