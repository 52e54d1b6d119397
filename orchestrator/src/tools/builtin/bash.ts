import { z } from 'zod';
import { GIT_SAFE_ENV } from '@gatehouse/shared';
import { defineTool, type Observed } from '../tool';
import { sandboxResult } from './common';

export const bash = defineTool({
  name: 'bash',
  description:
    'Run a bash command in the workspace, inside the sandbox (no network). Returns exit code and output. ' +
    'timeout is in milliseconds and is capped by the runtime; ' +
    'everything the command started is killed when it ends or times out.',
  input: z.strictObject({
    command: z
      .string()
      .min(1)
      .max(128 * 1024)
      .describe('the command line'),
    description: z.string().max(500).optional().describe('what the command is for, in a few words'),
    timeout: z.number().int().positive().optional().describe('milliseconds'),
  }),
  sideEffect: 'execute',
  // Whether a command only reads is the shell classifier's call (policy); without it, never assume so.
  isReadOnly: () => false,
  plan(input, ctx) {
    const wanted = input.timeout ?? ctx.limits.defaultTimeoutMs;
    const timeoutMs = Math.min(wanted, ctx.limits.maxTimeoutMs);
    return {
      executor: 'sandbox',
      primitive: 'exec',
      // cwd is explicit so the log says where the command ran, not just what it was. The git
      // overrides ride along so no git the command starts runs a program the repository names.
      input: {
        command: input.command,
        cwd: '.',
        trackChanges: true,
        env: { ...GIT_SAFE_ENV },
        // Gatehouse's own run (the check that decides the run) gets a HOME nothing earlier could prepare.
        ...(ctx.actor === 'runtime' ? { freshHome: true } : {}),
      },
      timeoutMs,
      ...(wanted > timeoutMs ? { note: `timeout capped at ${timeoutMs} ms (asked for ${wanted})` } : {}),
    };
  },
  observe(_input, raw): Observed {
    const r = sandboxResult(raw);
    const output = raw.executor === 'sandbox' && raw.fullOutput !== undefined ? raw.fullOutput : r.output;
    const changed =
      r.filesChanged.length > 0
        ? `\nfiles changed: ${r.filesChanged.slice(0, 50).join(', ')}${r.filesChanged.length > 50 ? ', …' : ''}`
        : '';
    if (r.status === 'rejected')
      return { ok: false, text: `error (${r.error?.code}): ${r.error?.message}`, external: false };
    const status =
      r.status === 'timeout'
        ? `timed out: ${r.error?.message ?? ''}`
        : r.status === 'aborted'
          ? 'cancelled'
          : `exit code ${r.exitCode ?? 'none'}${r.signal ? ` (signal ${r.signal})` : ''}`;
    return { ok: r.status === 'ok', text: `${status}${changed}\n${output}`, external: true };
  },
});
