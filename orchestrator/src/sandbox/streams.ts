import { PassThrough } from 'node:stream';

/** tar-fs 3 produces streamx streams; dockerode wants Node streams. A PassThrough bridges them. */
export function nodeStream(source: { pipe(dest: NodeJS.WritableStream): unknown }): PassThrough {
  const out = new PassThrough();
  source.pipe(out);
  return out;
}
