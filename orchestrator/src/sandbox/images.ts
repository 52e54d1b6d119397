import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { z } from 'zod';
import { docker, imageExists } from './docker';
import { buildFromDir, pullImage } from './image-build';
import { IMAGE_SOURCE_LABEL, pruneSuperseded } from './image-prune';
import { SandboxError } from './errors';
import { projectRoot } from './paths';
import { ensureRunImage, runImageTag } from './run-image';

const run = promisify(execFile);

/** Images gatehouse builds from its own Dockerfiles: the NATS server, the egress proxy and the toolchain presets. */
export type BuiltKind = 'nats' | 'egress' | 'preset-node' | 'preset-python';
export type PresetName = 'node' | 'python';
export const PRESETS: readonly PresetName[] = ['node', 'python'];

interface ImageSpec {
  kind: BuiltKind;
  /** Its Dockerfile's folder under images/. */
  dir: string;
  /** The public base the Dockerfile defaults to. */
  publicBase: string;
  /** The local base built with debootstrap where no registry is reachable. */
  localBase: string;
  /** images/base/build-local-base.sh's arguments after the image name. */
  localBaseArgs: string[];
}

const SPECS: Record<BuiltKind, ImageSpec> = {
  nats: {
    kind: 'nats',
    dir: 'nats',
    publicBase: 'debian:bookworm-slim',
    localBase: 'gatehouse/base-nats:bookworm',
    localBaseArgs: ['nats-server'],
  },
  // The egress proxy needs only node: the node preset's base, so no other base is built.
  egress: {
    kind: 'egress',
    dir: 'egress',
    publicBase: 'node:20-bookworm-slim',
    localBase: 'gatehouse/base-node-npm:bookworm',
    localBaseArgs: ['', '--with-npm'],
  },
  'preset-node': {
    kind: 'preset-node',
    dir: 'presets/node',
    publicBase: 'node:20-bookworm-slim',
    localBase: 'gatehouse/base-node-npm:bookworm',
    localBaseArgs: ['', '--with-npm'],
  },
  'preset-python': {
    kind: 'preset-python',
    dir: 'presets/python',
    publicBase: 'python:3.12-slim',
    localBase: 'gatehouse/base-python:bookworm',
    localBaseArgs: ['python3,python3-pip,python3-venv,python3-pytest,python-is-python3'],
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
  /** The default sandbox: the run image derived from preset:node. */
  sandbox: string;
  nats: string;
  /** The per-run egress proxy (egress-proxy.ts). */
  egress: string;
  /** Run images of the other presets asked for (`presets`), by preset name. */
  presets: Partial<Record<PresetName, string>>;
}

/**
 * Makes sure the NATS image and the default sandbox (the run image derived from preset:node)
 * exist, and the run images of `presets` too. Tags carry a hash of the build context (Dockerfile,
 * base; for run images the runtime and the toolchain image's id), so a changed daemon gets a new
 * image and an unchanged one is never rebuilt.
 */
export async function ensureImages(opts: EnsureImagesOptions & { presets?: PresetName[] } = {}): Promise<Images> {
  const choice = baseChoice(opts.base);
  const log = opts.log ?? (() => undefined);
  const prune = opts.prune ?? true;
  const nats = await ensureBuiltImage('nats', { base: choice, log, prune });
  const egress = await ensureBuiltImage('egress', { base: choice, log, prune });
  const runOpts = { log, prune, ...(opts.base ? { base: opts.base } : {}) };
  const sandbox = await ensureRunImage(await ensureBuiltImage('preset-node', { base: choice, log, prune }), runOpts);
  // The sandbox image of before toolchain images (gatehouse/sandbox:<hash>) is not used any more.
  if (prune) await pruneSuperseded(docker(), 'sandbox', '', projectRoot(), log);
  const presets: Images['presets'] = { node: sandbox };
  for (const name of opts.presets ?? []) {
    presets[name] ??= await ensureRunImage(
      await ensureBuiltImage(`preset-${name}`, { base: choice, log, prune }),
      runOpts,
    );
  }
  return { sandbox, nats, egress, presets };
}

export function baseChoice(given?: BaseChoice): BaseChoice {
  return BaseChoice.parse(given ?? process.env.GATEHOUSE_IMAGE_BASE ?? 'auto');
}

/**
 * The tags ensureImages would produce, without building anything (for doctor): the default
 * sandbox's run image (computable once its preset image exists; until then the preset's tags
 * stand in, and are missing too) and the NATS image.
 */
export async function expectedImageTags(
  choice: BaseChoice = 'auto',
): Promise<Record<'sandbox' | 'nats', { tags: string[] }>> {
  const tagsOf = (spec: ImageSpec) => Promise.all(basesFor(spec, choice).map((b) => tagFor(spec, b)));
  const sandbox: string[] = [];
  for (const preset of await tagsOf(SPECS['preset-node']))
    sandbox.push((await imageExists(preset)) ? await runImageTag(preset) : preset);
  return { sandbox: { tags: sandbox }, nats: { tags: await tagsOf(SPECS.nats) } };
}

/** One of gatehouse's own images (NATS, a preset), built from images/<dir> on the chosen base. */
export async function ensureBuiltImage(kind: BuiltKind, opts: EnsureImagesOptions = {}): Promise<string> {
  const spec = SPECS[kind];
  const choice = baseChoice(opts.base);
  const log = opts.log ?? (() => undefined);
  const d = docker();
  // Fast path: an image for this exact context already exists, from either base.
  for (const base of basesFor(spec, choice)) {
    const tag = await tagFor(spec, base);
    if (await imageExists(tag, d)) return tag;
  }
  if (kind === 'egress' && !existsSync(path.join(contextDir(spec), 'build', 'proxy.mjs')))
    throw new SandboxError('images/egress/build/proxy.mjs is missing: run `npm run build` first');
  const base = await resolveBase(spec, choice, d, log);
  const tag = await tagFor(spec, base);
  log(`building ${tag} from ${base}`);
  await buildFromDir(d, contextDir(spec), tag, {
    buildargs: { BASE: base },
    labels: { [IMAGE_SOURCE_LABEL]: projectRoot() },
  });
  // `latest` follows the newest build, for docker-compose.yml and people poking around by hand.
  await d.getImage(tag).tag({ repo: `gatehouse/${spec.kind}`, tag: 'latest' });
  if (opts.prune ?? true) await pruneSuperseded(d, spec.kind, tag, projectRoot(), log);
  return tag;
}

function basesFor(spec: ImageSpec, choice: BaseChoice): string[] {
  return choice === 'local'
    ? [spec.localBase]
    : choice === 'public'
      ? [spec.publicBase]
      : [spec.publicBase, spec.localBase];
}

async function resolveBase(spec: ImageSpec, choice: BaseChoice, d: Docker, log: (m: string) => void): Promise<string> {
  if (choice !== 'local') {
    if (await imageExists(spec.publicBase, d)) return spec.publicBase;
    log(`pulling ${spec.publicBase}`);
    try {
      await pullImage(d, spec.publicBase);
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
    await run('bash', [script, spec.localBase, ...spec.localBaseArgs], { maxBuffer: 64 * 1024 * 1024 });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new SandboxError(`building the local base image failed: ${(err.stderr ?? err.message).slice(-2000)}`);
  }
  return spec.localBase;
}

function contextDir(spec: ImageSpec): string {
  return path.join(projectRoot(), 'images', spec.dir);
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
