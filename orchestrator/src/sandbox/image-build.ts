import type Docker from 'dockerode';
import tar from 'tar-fs';
import { imageExists } from './docker';
import { SandboxError } from './errors';
import { nodeStream } from './streams';

export interface BuildOptions {
  buildargs?: Record<string, string>;
  labels?: Record<string, string>;
}

/**
 * `docker build` of a directory. A failed build's error names the step's own message: lines a
 * gatehouse step prints as `gatehouse: …` (prepare.mjs says why it refuses an image), else the
 * last lines of the build output.
 */
export async function buildFromDir(d: Docker, dir: string, tag: string, opts: BuildOptions = {}): Promise<void> {
  const stream = await d.buildImage(nodeStream(tar.pack(dir)), {
    t: tag,
    ...(opts.buildargs ? { buildargs: opts.buildargs } : {}),
    ...(opts.labels ? { labels: opts.labels } : {}),
    rm: true,
    forcerm: true,
  });
  await new Promise<void>((resolve, reject) => {
    d.modem.followProgress(stream, (err: Error | null, output: Array<{ error?: string; stream?: string }>) => {
      const failure = err?.message ?? output.find((o) => o.error)?.error;
      if (!failure) return resolve();
      const lines = output.flatMap((o) => (o.stream ?? '').split('\n')).filter((l) => l.trim() !== '');
      const own = lines.filter((l) => l.startsWith('gatehouse: '));
      const detail = (own.length > 0 ? own : lines.slice(-10)).join('\n');
      reject(new SandboxError(`docker build of ${tag} failed: ${failure}${detail ? `\n${detail}` : ''}`));
    });
  });
  if (!(await imageExists(tag, d)))
    throw new SandboxError(`docker build of ${tag} reported success but the image is missing`);
}

export async function pullImage(d: Docker, image: string): Promise<void> {
  const stream = await d.pull(image);
  await new Promise<void>((resolve, reject) => {
    d.modem.followProgress(stream, (err: Error | null, output: Array<{ error?: string }> = []) => {
      const failure = err?.message ?? output.find((o) => o.error)?.error;
      if (failure) reject(new Error(failure));
      else resolve();
    });
  });
}
