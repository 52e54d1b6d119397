import { Writable } from 'node:stream';

/**
 * Stdout for the MCP transport alone: returns a stream that writes to the real stdout, and points
 * `process.stdout.write` at stderr from then on, so a stray line from anywhere in gatehouse (a
 * notice, a library's warning) cannot break a frame. Logs belong on stderr anyway.
 */
export function framesOnlyStdout(): Writable {
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout) as (chunk: string | Uint8Array, cb: (e?: Error | null) => void) => boolean;
  const frames = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      write(chunk, (e) => callback(e ?? null));
    },
  });
  stdout.write = process.stderr.write.bind(process.stderr);
  return frames;
}
