import type { Readable } from 'node:stream';

/** Lines read one after another from a stream only the orchestrator writes (the container's stdin). */
export interface LineReader {
  /**
   * The next whole line (without its newline), waiting up to `waitMs`. Rejects, saying `what` was
   * missing, when the stream ends or fails first, or when the line grows past `maxBytes`.
   */
  next(what: string, waitMs: number, maxBytes: number): Promise<string>;
  /** Stops reading and closes the stream: nothing more is taken from it. */
  close(): void;
}

/** Whatever a reader asks for, no line is kept past this. */
const HARD_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Splits a stream into lines as they arrive, keeping what came ahead of the reader. A line is
 * returned only once its newline has come, so a half-written line is never parsed.
 */
export function readLines(input: Readable): LineReader {
  const lines: string[] = [];
  let partial: Buffer[] = [];
  let partialBytes = 0;
  let ended: string | undefined;
  let wake: (() => void) | undefined;

  input.on('data', (chunk: Buffer) => {
    let at = 0;
    for (let nl = chunk.indexOf(10, at); nl >= 0; nl = chunk.indexOf(10, at)) {
      partial.push(chunk.subarray(at, nl));
      lines.push(Buffer.concat(partial).toString('utf8'));
      partial = [];
      partialBytes = 0;
      at = nl + 1;
    }
    if (at < chunk.length) {
      partial.push(chunk.subarray(at));
      partialBytes += chunk.length - at;
    }
    if (partialBytes > HARD_MAX_BYTES) {
      ended ??= `a line grew past ${HARD_MAX_BYTES} bytes`;
      partial = [];
      input.destroy();
    }
    wake?.();
  });
  input.on('end', () => {
    ended ??= 'it was closed';
    wake?.();
  });
  input.on('error', (e: Error) => {
    ended ??= `reading it failed: ${e.message}`;
    wake?.();
  });

  return {
    async next(what, waitMs, maxBytes) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const line = lines.shift();
        if (line !== undefined) {
          if (Buffer.byteLength(line) > maxBytes) throw new Error(`${what} is longer than ${maxBytes} bytes`);
          return line;
        }
        if (partialBytes > maxBytes) throw new Error(`${what} is longer than ${maxBytes} bytes`);
        if (ended) throw new Error(`no ${what} on stdin: ${ended}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ${what} on stdin after ${waitMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    },
    close() {
      ended ??= 'reading stopped';
      input.destroy();
    },
  };
}
