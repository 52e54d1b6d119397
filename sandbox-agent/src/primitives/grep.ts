import type { GrepMatch, InvocationOf } from '@gatehouse/shared';
import { PrimitiveError } from '../errors';
import { runProcess } from '../process';
import { scrubbedEnv } from './env';
import type { Outcome, PrimitiveContext } from './context';

const DEFAULT_LIMIT = 500;

/**
 * GNU grep in a child process rather than JavaScript regexes in the daemon: a pathological pattern
 * then costs a killable process at the invocation's timeout, not a frozen daemon.
 */
export async function grep(input: InvocationOf<'grep'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const target = await ctx.ws.resolveExpecting(input.path ?? '.', input.expectReal);
  // Report a missing path as not_found, like the other primitives, rather than as grep's exit-2
  // io_error (which reads like the search itself broke).
  if (!target.exists) throw new PrimitiveError('not_found', `${target.rel} does not exist`, 'failed', target.rel);
  // --devices=skip: a FIFO named as the path would otherwise block grep until the timeout.
  const args = [
    '-rnIE',
    '--null',
    '--color=never',
    '--devices=skip',
    '--exclude-dir=.git',
    '--exclude-dir=node_modules',
  ];
  if (input.ignoreCase) args.push('-i');
  if (input.include) args.push(`--include=${input.include}`);
  args.push('-e', input.pattern, '--', target.rel);
  const run = await runProcess('grep', args, {
    cwd: ctx.ws.root,
    env: scrubbedEnv(),
    timeoutMs: ctx.timeoutMs,
    outputCap: ctx.outputCap,
    signal: ctx.signal,
    user: ctx.user,
  });
  const base = { exitCode: run.exitCode, signal: run.signal, bytes: run.bytes, truncated: run.truncated };
  if (run.aborted)
    return { ...base, status: 'aborted', output: '', error: { code: 'cancelled', message: 'cancelled' } };
  if (run.timedOut)
    return {
      ...base,
      status: 'timeout',
      output: '',
      error: { code: 'timeout', message: `grep timed out after ${ctx.timeoutMs} ms` },
    };
  // grep: 0 = matches, 1 = none, 2 = trouble (bad pattern, unreadable file).
  if (run.exitCode !== 0 && run.exitCode !== 1) {
    return {
      ...base,
      status: 'failed',
      output: run.output,
      error: { code: 'io_error', message: firstLine(run.output) || 'grep failed' },
    };
  }
  const limit = input.limit ?? DEFAULT_LIMIT;
  const matches: GrepMatch[] = [];
  let truncated = run.truncated;
  // With a truncated capture the middle of the output is gone; only the head is trusted.
  const usable = run.truncated ? (run.stdout.split('\n[… ')[0] ?? '') : run.stdout;
  for (const line of usable.split('\n')) {
    const nul = line.indexOf('\0');
    if (nul < 0) continue;
    const rest = line.slice(nul + 1);
    const colon = rest.indexOf(':');
    const lineNo = Number(rest.slice(0, colon));
    if (colon < 0 || !Number.isInteger(lineNo) || lineNo < 1) continue;
    if (matches.length >= limit) {
      truncated = true;
      break;
    }
    matches.push({ path: line.slice(0, nul).replace(/^\.\//, ''), line: lineNo, text: rest.slice(colon + 1) });
  }
  const output = matches.map((m) => `${m.path}:${m.line}:${m.text}`).join('\n');
  return { ...base, status: 'ok', output, truncated, data: { kind: 'grep', matches } };
}

function firstLine(s: string): string {
  return (
    s
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.slice(0, 500) ?? ''
  );
}
