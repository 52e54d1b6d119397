import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import tar from 'tar-fs';
import { z } from 'zod';
import { docker, imageExists } from './docker';
import { IMAGE_SOURCE_LABEL, pruneSuperseded } from './image-prune';
import { SandboxError } from './errors';
import { projectRoot } from './paths';
import { nodeStream } from './streams';

const run = promisify(execFile);

interface ImageSpec {
  kind: 'sandbox' | 'nats' | 'egress';
  /** The public base the Dockerfile defaults to. */
  publicBase: string;
  /** The local base built with debootstrap where no registry is reachable. */
  localBase: string;
  localExtraPackages: string;
}

const SPECS: Record<ImageSpec['kind'], ImageSpec> = {
  sandbox: {
    kind: 'sandbox',
    publicBase: 'node:20-bookworm-slim',
    localBase: 'gatehouse/base-node:bookworm',
    localExtraPackages: '',
  },
  nats: {
    kind: 'nats',
    publicBase: 'debian:bookworm-slim',
    localBase: 'gatehouse/base-nats:bookworm',
    localExtraPackages: 'nats-server',
  },
  // The egress proxy needs only node: the same base as the sandbox.
  egress: {
    kind: 'egress',
    publicBase: 'node:20-bookworm-slim',
    localBase: 'gatehouse/base-node:bookworm',
    localExtraPackages: '',
  },
};

export const BaseChoice = z.enum(['auto', 'public', 'local']);
export type BaseChoice = z.infer<typeof BaseChoice>;

export interface EnsureImagesOptions {
  /** auto: the public base if it is present or can be pulled, else a local debootstrap base. */
  base?: BaseChoice;
  log?: (msg: string) => void;
  /**
   * Remove this checkout's images of older build contexts (default true; image-prune.ts). Test runs
   * pass false: several runs of one checkout may share an engine, and removing an image another
   * run still starts sandboxes from breaks it.
   */
  prune?: boolean;
}

export interface Images {
  sandbox: string;
  nats: string;
  /** The per-run egress proxy (egress-proxy.ts). */
  egress: string;
}

/**
 * Makes sure the images exist. Tags carry a hash of the build context (Dockerfile, bundled daemon,
 * base), so a changed daemon gets a new image and an unchanged one is never rebuilt.
 */
export async function ensureImages(opts: EnsureImagesOptions = {}): Promise<Images> {
  const choice = BaseChoice.parse(opts.base ?? process.env.GATEHOUSE_IMAGE_BASE ?? 'auto');
  const log = opts.log ?? (() => undefined);
  return {
    sandbox: await ensureImage(SPECS.sandbox, choice, log, opts.prune ?? true),
    nats: await ensureImage(SPECS.nats, choice, log, opts.prune ?? true),
    egress: await ensureImage(SPECS.egress, choice, log, opts.prune ?? true),
  };
}

/** The tags ensureImages would produce, without building anything (for doctor). */
export async function expectedImageTags(
  choice: BaseChoice = 'auto',
): Promise<Record<ImageSpec['kind'], { tags: string[] }>> {
  const result = {} as Record<ImageSpec['kind'], { tags: string[] }>;
  for (const spec of Object.values(SPECS)) {
    const bases =
      choice === 'public'
        ? [spec.publicBase]
        : choice === 'local'
          ? [spec.localBase]
          : [spec.publicBase, spec.localBase];
    result[spec.kind] = { tags: await Promise.all(bases.map((b) => tagFor(spec, b))) };
  }
  return result;
}

async function ensureImage(
  spec: ImageSpec,
  choice: BaseChoice,
  log: (m: string) => void,
  prune: boolean,
): Promise<string> {
  const d = docker();
  // Fast path: an image for this exact context already exists, from either base.
  for (const base of choice === 'local'
    ? [spec.localBase]
    : choice === 'public'
      ? [spec.publicBase]
      : [spec.publicBase, spec.localBase]) {
    const tag = await tagFor(spec, base);
    if (await imageExists(tag, d)) return tag;
  }
  const base = await resolveBase(spec, choice, d, log);
  const tag = await tagFor(spec, base);
  log(`building ${tag} from ${base}`);
  await buildImage(d, contextDir(spec), tag, base);
  // `latest` follows the newest build, for docker-compose.yml and people poking around by hand.
  await d.getImage(tag).tag({ repo: `gatehouse/${spec.kind}`, tag: 'latest' });
  if (prune) await pruneSuperseded(d, spec.kind, tag, projectRoot(), log);
  return tag;
}

async function resolveBase(spec: ImageSpec, choice: BaseChoice, d: Docker, log: (m: string) => void): Promise<string> {
  if (choice !== 'local') {
    if (await imageExists(spec.publicBase, d)) return spec.publicBase;
    log(`pulling ${spec.publicBase}`);
    try {
      await pull(d, spec.publicBase);
      return spec.publicBase;
    } catch (e) {
      if (choice === 'public') throw new SandboxError(`cannot pull ${spec.publicBase}: ${(e as Error).message}`);
      log(`no registry (${(e as Error).message.split('\n')[0]}); using a local base`);
    }
  }
  if (await imageExists(spec.localBase, d)) return spec.localBase;
  log(`building local base ${spec.localBase} with debootstrap (about a minute, once)`);
  const script = path.join(projectRoot(), 'images', 'base', 'build-local-base.sh');
  try {
    await run('bash', [script, spec.localBase, spec.localExtraPackages], { maxBuffer: 64 * 1024 * 1024 });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new SandboxError(`building the local base image failed: ${(err.stderr ?? err.message).slice(-2000)}`);
  }
  return spec.localBase;
}

function contextDir(spec: ImageSpec): string {
  return path.join(projectRoot(), 'images', spec.kind);
}

async function tagFor(spec: ImageSpec, base: string): Promise<string> {
  const dir = contextDir(spec);
  const hash = createHash('sha256').update(`base=${base}\n`);
  for (const file of await listFiles(dir)) {
    hash.update(`${file}\n`);
    hash.update(await fs.readFile(path.join(dir, file)));
  }
  return `gatehouse/${spec.kind}:${hash.digest('hex').slice(0, 12)}`;
}

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await fs.readdir(path.join(dir, prefix), { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const rel = path.join(prefix, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else if (entry.isFile()) out.push(rel);
  }
  return out;
}

async function buildImage(d: Docker, dir: string, tag: string, base: string): Promise<void> {
  for (const [kind, program] of [
    ['sandbox', 'agent.mjs'],
    ['egress', 'proxy.mjs'],
  ]) {
    if (path.basename(dir) === kind && !existsSync(path.join(dir, 'build', program!))) {
      throw new SandboxError(`images/${kind}/build/${program} is missing: run \`npm run build\` first`);
    }
  }
  const stream = await d.buildImage(nodeStream(tar.pack(dir)), {
    t: tag,
    buildargs: { BASE: base },
    labels: { [IMAGE_SOURCE_LABEL]: projectRoot() },
    rm: true,
    forcerm: true,
  });
  await new Promise<void>((resolve, reject) => {
    d.modem.followProgress(stream, (err: Error | null, output: Array<{ error?: string }>) => {
      const failure = err?.message ?? output.find((o) => o.error)?.error;
      if (failure) reject(new SandboxError(`docker build of ${tag} failed: ${failure}`));
      else resolve();
    });
  });
  if (!(await imageExists(tag, d)))
    throw new SandboxError(`docker build of ${tag} reported success but the image is missing`);
}

async function pull(d: Docker, image: string): Promise<void> {
  const stream = await d.pull(image);
  await new Promise<void>((resolve, reject) => {
    d.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve()));
  });
}
