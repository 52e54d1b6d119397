import { PassThrough } from 'node:stream';

interface StreamLike {
  pipe(dest: NodeJS.WritableStream): unknown;
  on(event: 'error', listener: (e: Error) => void): unknown;
}

/**
 * tar-fs 3 produces streamx streams; dockerode wants Node streams. A PassThrough bridges them, and
 * a source error (a file vanished mid-copy) must fail the consumer, not crash the process.
 */
export function nodeStream(source: StreamLike): PassThrough {
  const out = new PassThrough();
  source.on('error', (e) => out.destroy(e));
  source.pipe(out);
  return out;
}
