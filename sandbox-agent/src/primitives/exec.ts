import { closeSync, constants, fchownSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { STREAM_CAP, type InvocationOf } from '@gatehouse/shared';
import { PrimitiveError } from '../errors';
import { runProcess, type ProcessOutcome } from '../process';
import { scrubbedEnv } from './env';
import { statOrThrow } from './file-io';
import type { Outcome, PrimitiveContext } from './context';
import { diffSnapshots, snapshot } from './snapshot';

/**
 * Runs the command with oom_score_adj 1000, inherited by everything it starts. The daemon shares
 * the sandbox's memory limit with the commands, and after a few large outputs it is often the
 * biggest single process: without this, a build running several medium-sized workers got the
 * daemon OOM-killed (and the sandbox lost) instead of a worker. Raising one's own score needs no
 * privilege; a failure to write it is ignored. It is a builtin prefix on the command's own first
 * line, not a wrapper shell: one bash starts instead of two (an exec'ing wrapper cost ~1.5 ms per
 * call), and the command's line numbers and $0 stay what they would be.
 */
const OOM_FIRST = '{ echo 1000 > /proc/self/oom_score_adj; } 2>/dev/null; ';

export async function exec(input: InvocationOf<'exec'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const cwd = await ctx.ws.resolve(input.cwd ?? '.');
  const st = statOrThrow(cwd);
  if (!st.isDirectory())
    throw new PrimitiveError('not_a_directory', `cwd ${cwd.rel} is not a directory`, 'rejected', cwd.rel);

  const before = input.trackChanges ? await snapshot(ctx.ws.root) : undefined;
  const home = input.freshHome ? freshHome(ctx.user) : undefined;
  const run = await runProcess('/bin/bash', ['-c', OOM_FIRST + input.command], {
    cwd: cwd.real,
    env: scrubbedEnv({ ...input.env, ...(home ? { HOME: home } : {}) }),
    timeoutMs: ctx.timeoutMs,
    outputCap: ctx.outputCap,
    signal: ctx.signal,
    onOutput: ctx.onOutput,
    streamCap: STREAM_CAP,
    user: ctx.user,
  });
  const filesChanged = before ? diffSnapshots(before, await snapshot(ctx.ws.root)) : [];
  return outcomeOf(run, ctx.timeoutMs, { filesChanged });
}

/** Where the deciding check's HOME is made afresh (freshHome); in /tmp, the one place commands may write. */
export const FRESH_HOME = '/tmp/.gatehouse-check-home';

/**
 * Empties and makes FRESH_HOME as root, then gives it to the command user. No command user process
 * is alive between execs (the daemon sweeps them after each), so nothing can put a file or a link
 * there between this and the command's start; whatever a command left there (a directory, a link,
 * a file) is removed first: rmSync never follows a link, it removes the link.
 */
function freshHome(user: { uid: number; gid: number }): string {
  rmSync(FRESH_HOME, { recursive: true, force: true });
  mkdirSync(FRESH_HOME, { mode: 0o700 });
  // Given away through a descriptor of the directory just made, never by a path a link could replace.
  const fd = openSync(FRESH_HOME, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    fchownSync(fd, user.uid, user.gid);
  } finally {
    closeSync(fd);
  }
  return FRESH_HOME;
}

/** Maps a finished process to an outcome: timeout and cancel are distinct from a failing exit. */
export function outcomeOf(run: ProcessOutcome, timeoutMs: number, extra: Partial<Outcome> = {}): Outcome {
  const base = {
    exitCode: run.exitCode,
    signal: run.signal,
    output: run.output,
    bytes: run.bytes,
    truncated: run.truncated,
    data: { kind: 'exec' as const, stdoutBytes: run.stdoutBytes, stderrBytes: run.stderrBytes },
    ...extra,
  };
  if (run.spawnError !== undefined)
    return { ...base, status: 'failed', error: { code: 'io_error', message: `could not start: ${run.spawnError}` } };
  if (run.aborted)
    return {
      ...base,
      status: 'aborted',
      error: { code: 'cancelled', message: 'cancelled; the process group was killed' },
    };
  if (run.timedOut) {
    return {
      ...base,
      status: 'timeout',
      error: { code: 'timeout', message: `timed out after ${timeoutMs} ms; the process group was killed` },
    };
  }
  return { ...base, status: run.exitCode === 0 ? 'ok' : 'failed' };
}
