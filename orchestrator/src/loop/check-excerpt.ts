import { frame } from '../tools/observe/frame';
import { argsHashOf } from '../tools/recorded-values';
import type { CheckRun } from './check-runs';

/** How much of the end of a failed check's output goes back to the model with the feedback. */
export const EXCERPT_CHARS = 1500;

/**
 * The end of what a run of the check printed, framed again as untrusted data (a fresh nonce): the
 * feedback is a user message, and command output must never read as instructions from the harness.
 */
export function checkExcerpt(run: CheckRun, max = EXCERPT_CHARS): string {
  const body = bodyOf(run.content ?? '');
  const tail = body.length > max ? `…${body.slice(body.length - max)}` : body;
  return frame(
    tail,
    {
      observationId: run.observationId ?? run.callId,
      tool: 'bash',
      outcome: run.observationOutcome ?? 'failed',
      argsHash: argsHashOf(run.input),
      at: new Date().toISOString(),
    },
    true,
  );
}

/** An observation's text without its frame: what is inside the untrusted-data block, else all but the head line. */
export function bodyOf(content: string): string {
  const framed = /<untrusted-data id="[^"]*" nonce="([0-9a-f]+)">\n([\s\S]*)\n<\/untrusted-data nonce="\1">/.exec(
    content,
  );
  if (framed) return framed[2]!;
  const newline = content.indexOf('\n');
  return newline < 0 ? content : content.slice(newline + 1);
}

/** The first line of an observation's body, cut short: why a check did not run, for `run.check`'s reason. */
export function firstLine(content: string | undefined, max = 300): string {
  const line = (bodyOf(content ?? '').split('\n')[0] ?? '').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
