import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import tarStream from 'tar-stream';
import { imageExists } from './docker';
import { SandboxError } from './errors';
import { IMAGE_SOURCE_LABEL } from './image-prune';
import { LABEL } from './labels';
import { SANDBOX_UID, WORKSPACE } from './container';
import { projectRoot } from './paths';
import { nodeStream } from './streams';

export interface WorkspaceImageOptions {
  /** The image the new one is built on (the run image the sandbox was started from). */
  baseImage: string;
  tag: string;
  /** Which workspace entries (relative paths) go into the image; parents of kept entries come along. */
  keep: (rel: string) => boolean;
  labels?: Record<string, string>;
  /** Values that must not be in the image (secrets given to setup): finding one fails the build, naming it. */
  forbidden?: ReadonlyArray<{ name: string; value: string }>;
}

export interface WorkspaceImageReport {
  /** Kept entries whose parent was not kept: a new directory counts once. */
  roots: string[];
  files: number;
  bytes: number;
}

/**
 * Builds an image whose /workspace holds part of a sandbox's workspace, streamed from Docker's
 * archive API into a build context without touching the host's disk. A container started from it
 * gets those files in its workspace volume (Docker fills an empty volume from the image), so a run
 * with the same setup starts with setup's results in place. Everything is the command user's.
 */
export async function imageFromWorkspace(
  d: Docker,
  container: Docker.Container,
  o: WorkspaceImageOptions,
): Promise<WorkspaceImageReport> {
  const source = await container.getArchive({ path: `${WORKSPACE}/.` });
  const extract = tarStream.extract();
  const context = tarStream.pack();
  const dockerfile = [`FROM ${o.baseImage}`, `COPY --chown=${SANDBOX_UID}:${SANDBOX_UID} ws/ ${WORKSPACE}/`].join('\n');
  context.entry({ name: 'Dockerfile', mode: 0o644 }, `${dockerfile}\n`);
  context.entry({ name: 'ws', type: 'directory', mode: 0o755 });
  const report: WorkspaceImageReport = { roots: [], files: 0, bytes: 0 };
  const kept = new Set<string>();
  const pendingDirs = new Map<string, tarStream.Header>();
  const maxSecret = Math.max(0, ...(o.forbidden ?? []).map((f) => Buffer.byteLength(f.value)));

  /** Adds the folders above `rel` not yet added; the name of a secret one of them carries stops it. */
  const emitParents = (rel: string): string | undefined => {
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const header = pendingDirs.get(dir);
      if (header) {
        const carried = secretInHeader(header, o.forbidden);
        if (carried) return carried;
        context.entry({ ...header, name: `ws/${dir}` });
        pendingDirs.delete(dir);
        kept.add(dir);
      }
    }
    return undefined;
  };

  const copying = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, body, next) => {
      const rel = header.name.replace(/^\.\//, '').replace(/\/$/, '');
      const fail = (e: Error): void => {
        body.resume();
        reject(e);
      };
      if (rel === '' || rel === '.' || rel === '.git' || rel.startsWith('.git/')) {
        body.on('end', next);
        body.resume();
        return;
      }
      if (!o.keep(rel)) {
        if (header.type === 'directory') pendingDirs.set(rel, header);
        body.on('end', next);
        body.resume();
        return;
      }
      // A secret rides as easily in what describes an entry as in its content: its name, a link's
      // target, an extended attribute (pax records). Those are checked whole, before anything is kept.
      const carried = secretInHeader(header, o.forbidden) ?? emitParents(rel);
      if (carried)
        return fail(
          new SandboxError(
            `setup put the value of ${carried} into the name, link target or attributes of a path under ` +
              `${rel.split('/')[0]}; secrets given to setup must not reach the agent, so nothing was cached ` +
              `and the run stops. Keep credentials out of the files setup leaves behind.`,
          ),
        );
      const parent = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
      if (parent === '' || !kept.has(parent)) report.roots.push(rel);
      kept.add(rel);
      if (header.type !== 'file') {
        context.entry({ ...header, name: `ws/${rel}` });
        body.on('end', next);
        body.resume();
        return;
      }
      report.files++;
      report.bytes += header.size ?? 0;
      // Streamed into the context, never held whole: a file setup makes may be larger than memory. A
      // secret found part-way fails the copy, and the build with it, before anything is tagged.
      const sink = context.entry({ ...header, name: `ws/${rel}` }, (err) => (err ? reject(err) : next()));
      let tail = Buffer.alloc(0);
      body.on('data', (data: unknown) => {
        const c = data as Buffer;
        if (maxSecret > 0) {
          const window = Buffer.concat([tail, c]);
          for (const f of o.forbidden ?? [])
            if (window.includes(f.value))
              return fail(
                new SandboxError(
                  `setup wrote the value of ${f.name} into ${rel}; secrets given to setup must not reach the agent, ` +
                    `so nothing was cached and the run stops. Keep credentials out of the files setup leaves behind.`,
                ),
              );
          tail = window.subarray(Math.max(0, window.length - maxSecret + 1));
        }
      });
      body.pipe(sink);
      body.on('error', reject);
    });
    extract.on('finish', () => {
      context.finalize();
      resolve();
    });
    extract.on('error', reject);
    source.on('error', reject);
  });
  source.pipe(extract);

  // Built under a name of its own and tagged only once everything was copied and checked: a cut-short
  // copy must never leave an image under the cache's tag, or later runs would start from it.
  const building = `${o.tag.replace(/:[^:/]*$/, '')}:partial-${randomBytes(6).toString('hex')}`;
  const build = d.buildImage(nodeStream(context), {
    t: building,
    labels: { [LABEL.role]: 'setup-cache', [IMAGE_SOURCE_LABEL]: projectRoot(), ...o.labels },
    rm: true,
    forcerm: true,
  });
  // A failed copy (a secret found, a broken archive) must end the build too, or Docker waits for the rest.
  copying.catch((e: Error) => {
    // Cut short without an error of its own (tar-stream re-emits one on its entry sink, unheard):
    // Docker sees a truncated context and fails the build, and the image is never tagged.
    void e;
    context.on('error', () => undefined);
    context.destroy();
    (source as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
  });
  const [stream] = await Promise.all([build.catch((e: Error) => copying.then(() => Promise.reject(e))), copying]);
  try {
    await new Promise<void>((resolve, reject) => {
      d.modem.followProgress(stream, (err: Error | null, output: Array<{ error?: string }>) => {
        const failure = err?.message ?? output.find((x) => x.error)?.error;
        if (failure) reject(new SandboxError(`building the setup cache image ${o.tag} failed: ${failure}`));
        else resolve();
      });
    });
    if (!(await imageExists(building, d)))
      throw new SandboxError(`building ${o.tag} reported success but the image is missing`);
    const colon = o.tag.lastIndexOf(':');
    await d.getImage(building).tag({ repo: o.tag.slice(0, colon), tag: o.tag.slice(colon + 1) });
  } finally {
    await d
      .getImage(building)
      .remove({ noprune: true })
      .catch(() => undefined);
  }
  return report;
}

/** The name of the first forbidden value in an entry's name, link target or pax records, if any. */
function secretInHeader(header: tarStream.Header, forbidden: WorkspaceImageOptions['forbidden']): string | undefined {
  if (!forbidden || forbidden.length === 0) return undefined;
  const pax = (header as tarStream.Header & { pax?: Record<string, string> }).pax ?? {};
  const texts = [header.name, header.linkname ?? '', ...Object.entries(pax).flat()];
  return forbidden.find((f) => f.value !== '' && texts.some((t) => t.includes(f.value)))?.name;
}
