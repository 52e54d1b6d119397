/**
 * A reader that goes away (`gatehouse runs | head`, a closed terminal) makes the next write to
 * stdout or stderr fail with EPIPE, which Node raises as an 'error' event: with no listener it is
 * an uncaught exception, a stack trace, and a live run killed mid-step with its writer lock and
 * sandbox left behind. Every command's output goes through process.stdout and process.stderr (the
 * pino logger has its own guard), so this is the one place that handles it: a closed stream is
 * marked, later writes to it are dropped by the stream itself, and the command goes on to its end
 * and its own exit code. A live run is told through onOutputClosed (docs/cli.md says what it does).
 */

export type OutputStream = 'stdout' | 'stderr';

const closed = new Set<OutputStream>();
const listeners = new Set<(which: OutputStream) => void>();
let guarded = false;

/** The errors a write gets when nobody reads any more: the pipe broke, or the stream was already closed for it. */
export function isClosedPipeError(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}

/** Installs the guard on process.stdout and process.stderr (once; later calls do nothing). */
export function guardOutput(): void {
  if (guarded) return;
  guarded = true;
  for (const which of ['stdout', 'stderr'] as const) {
    process[which].on('error', (e: unknown) => {
      // Any other failure of our own output is a real fault: it stays as loud as it was.
      if (!isClosedPipeError(e)) throw e;
      if (closed.has(which)) return;
      closed.add(which);
      for (const listener of [...listeners]) listener(which);
    });
  }
}

/** Whether a reader of this stream went away (writes to it are dropped from then on). */
export function outputClosed(which: OutputStream): boolean {
  return closed.has(which);
}

/** Called once per stream when its reader goes away; returns the function that stops listening. */
export function onOutputClosed(listener: (which: OutputStream) => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}
