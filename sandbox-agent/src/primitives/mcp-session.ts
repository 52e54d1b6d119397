import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { MCP_CHUNK_BYTES, MCP_MAX_MESSAGE_BYTES, STREAM_CAP, type InvocationOf } from '@gatehouse/shared';
import { HeadTailBuffer } from '../capture';
import { PrimitiveError } from '../errors';
import { scrubbedEnv } from './env';
import { statOrThrow } from './file-io';
import type { Outcome, PrimitiveContext } from './context';

/**
 * The server's program is started by bash only to raise its own OOM score first (as exec does, see
 * exec.ts), then replaced by the program: `$0` and `$@` carry the command and its arguments, so
 * nothing of them is ever read as shell text.
 */
const OOM_THEN_EXEC = '{ echo 1000 > /proc/self/oom_score_adj; } 2>/dev/null; exec "$0" "$@"';

/** After the server exits, how long its pipes may stay open before its group is killed. */
const EXIT_GRACE_MS = 200;

/**
 * Runs an MCP stdio server for one session, as the command user, in its own process group, with the
 * scrubbed environment plus the env the config gave it. Lines come in through `mcp_send`
 * (McpSessions); its stdout goes out as this invocation's output chunks, at most MCP_CHUNK_BYTES
 * each. A message (line) over MCP_MAX_MESSAGE_BYTES, or more than STREAM_CAP in all, ends the
 * session: a bounded relay, never an unbounded buffer. Cancel, timeout and the server's exit kill the
 * whole group; the daemon's sweep then ends anything of the command user that is left.
 */
export async function mcpSession(input: InvocationOf<'mcp_session'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const cwd = await ctx.ws.resolve(input.cwd ?? '.');
  if (!statOrThrow(cwd).isDirectory())
    throw new PrimitiveError('not_a_directory', `cwd ${cwd.rel} is not a directory`, 'rejected', cwd.rel);
  const stderr = new HeadTailBuffer(ctx.outputCap);
  return new Promise((resolve) => {
    const child = spawn('/bin/bash', ['-c', OOM_THEN_EXEC, input.command, ...input.args], {
      cwd: cwd.real,
      env: scrubbedEnv(input.env),
      detached: true,
      uid: ctx.user.uid,
      gid: ctx.user.gid,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let ended: { why: 'timeout' | 'cancelled' | 'too_large'; message: string } | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let stdoutBytes = 0;
    let lineBytes = 0;
    let settled = false;
    const decoder = new StringDecoder('utf8');
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is gone already.
      }
    };
    const end = (why: NonNullable<typeof ended>['why'], message: string): void => {
      ended ??= { why, message };
      killGroup();
    };
    const timer = setTimeout(
      () => end('timeout', `the session ran for its limit of ${ctx.timeoutMs} ms; the server was stopped`),
      ctx.timeoutMs,
    );
    const onAbort = (): void => end('cancelled', 'the session was closed; the server was stopped');
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (child.stdin) {
      child.stdin.on('error', () => undefined);
      ctx.sessions.open(ctx.invocationId, child.stdin);
    }
    // The session's first chunk, empty and on stderr, says the server is started and takes lines.
    child.once('spawn', () => ctx.onOutput('stderr', ''));

    child.stdout?.on('data', (chunk: Buffer) => {
      if (ended) return;
      stdoutBytes += chunk.length;
      const lines = lineLengths(chunk, lineBytes);
      lineBytes = lines.open;
      if (lines.longest > MCP_MAX_MESSAGE_BYTES)
        return end('too_large', `the server sent a message over ${MCP_MAX_MESSAGE_BYTES} bytes; it was stopped`);
      if (stdoutBytes > STREAM_CAP)
        return end('too_large', `the server sent more than ${STREAM_CAP} bytes in one session; it was stopped`);
      for (let at = 0; at < chunk.length; at += MCP_CHUNK_BYTES) {
        const text = decoder.write(chunk.subarray(at, at + MCP_CHUNK_BYTES));
        if (text) ctx.onOutput('stdout', text);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));

    let grace: NodeJS.Timeout | undefined;
    const finish = (spawnError?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (grace) clearTimeout(grace);
      ctx.signal.removeEventListener('abort', onAbort);
      ctx.sessions.close(ctx.invocationId);
      killGroup();
      const base = {
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        output: stderr.text(),
        bytes: stderr.total,
        truncated: stderr.truncated,
        data: { kind: 'mcp_session' as const, stdoutBytes, stderrBytes: stderr.total },
      };
      if (spawnError !== undefined)
        return resolve({
          ...base,
          status: 'failed',
          error: { code: 'io_error', message: `could not start: ${spawnError}` },
        });
      if (ended?.why === 'cancelled')
        return resolve({ ...base, status: 'aborted', error: { code: 'cancelled', message: ended.message } });
      if (ended?.why === 'timeout')
        return resolve({ ...base, status: 'timeout', error: { code: 'timeout', message: ended.message } });
      if (ended?.why === 'too_large')
        return resolve({ ...base, status: 'failed', error: { code: 'too_large', message: ended.message } });
      resolve({ ...base, status: exit?.code === 0 ? 'ok' : 'failed' });
    };
    child.on('error', (e) => finish(e.message));
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      grace = setTimeout(() => {
        killGroup();
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, EXIT_GRACE_MS);
    });
    child.on('close', () => finish());
  });
}

/**
 * The longest line a chunk ends or continues (the line open before it counts `open` bytes already),
 * and how long the line left open after it is.
 */
function lineLengths(chunk: Buffer, open: number): { longest: number; open: number } {
  let longest = 0;
  let start = 0;
  let carried = open;
  for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) {
    longest = Math.max(longest, carried + i - start);
    carried = 0;
    start = i + 1;
  }
  const rest = carried + chunk.length - start;
  return { longest: Math.max(longest, rest), open: rest };
}
