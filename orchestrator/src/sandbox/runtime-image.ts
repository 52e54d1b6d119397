import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fs, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { docker, imageExists } from './docker';
import { SandboxError } from './errors';
import { buildFromDir } from './image-build';
import { IMAGE_SOURCE_LABEL, pruneSuperseded } from './image-prune';
import { projectRoot } from './paths';

const run = promisify(execFile);

/** The files of images/sandbox that go into the runtime, and the script that assembles it. */
const SOURCES = [
  'build/daemon.cjs',
  'agent.mjs',
  'load-daemon.mjs',
  'make-code-cache.mjs',
  'bin/git',
  'prepare.mjs',
  'assemble-runtime.sh',
];

export interface RuntimeOptions {
  log?: (msg: string) => void;
  /** Remove this checkout's runtime images of older inputs (image-prune.ts); tests pass false. */
  prune?: boolean;
}

/** The Docker architecture of the host's node and git, which the runtime carries. */
export function runtimeArchitecture(): string {
  return process.arch === 'x64' ? 'amd64' : process.arch;
}

/**
 * `gatehouse/runtime:<hash>`: /opt/gatehouse with the daemon, the git wrapper and the host's node
 * and git made self-contained (images/sandbox/assemble-runtime.sh). The hash covers those sources
 * and the host binaries (path, size, mtime: hashing 100 MB of node on every start costs more than
 * it tells), so it is rebuilt only when one of them changed.
 */
export async function ensureRuntimeImage(opts: RuntimeOptions = {}): Promise<string> {
  const inputs = await runtimeInputs();
  const tag = runtimeTag(inputs);
  let pending = building.get(tag);
  if (!pending) {
    pending = build(tag, inputs, opts);
    building.set(tag, pending);
    pending.catch(() => building.delete(tag));
  }
  return pending;
}

const building = new Map<string, Promise<string>>();

/** The runtime's tag for the current sources and host binaries, without building anything. */
export async function runtimeImageTag(): Promise<string> {
  return runtimeTag(await runtimeInputs());
}

function runtimeTag(inputs: RuntimeInputs): string {
  return `gatehouse/runtime:${inputs.hash}`;
}

interface RuntimeInputs {
  hash: string;
  node: string;
  git: string;
}

async function runtimeInputs(): Promise<RuntimeInputs> {
  const dir = path.join(projectRoot(), 'images', 'sandbox');
  if (!existsSync(path.join(dir, 'build', 'daemon.cjs')))
    throw new SandboxError('images/sandbox/build/daemon.cjs is missing: run `npm run build` first');
  const node = realpathSync(process.execPath);
  const git = findOnPath('git');
  const hash = createHash('sha256').update(`arch=${runtimeArchitecture()}\n`);
  for (const file of SOURCES) {
    hash.update(`${file}\n`);
    hash.update(await fs.readFile(path.join(dir, file)));
  }
  for (const [name, file] of [
    ['node', node],
    ['git', git],
  ] as const) {
    const st = statSync(file);
    hash.update(`${name}=${file} ${st.size} ${st.mtimeMs}\n`);
  }
  return { hash: hash.digest('hex').slice(0, 12), node, git };
}

/** The real path of `program` on the PATH; a SandboxError that says how to install it when it is missing. */
export function findOnPath(program: string): string {
  for (const dir of (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':')) {
    const candidate = path.join(dir || '.', program);
    if (dir && existsSync(candidate) && statSync(candidate).isFile()) return realpathSync(candidate);
  }
  throw new SandboxError(
    `${program} is not on the PATH: the sandbox runtime carries the host's ${program}; install it (Debian: ` +
      `apt-get install ${program}) and run again`,
  );
}

async function build(tag: string, inputs: RuntimeInputs, opts: RuntimeOptions): Promise<string> {
  const d = docker();
  if (await imageExists(tag, d)) return tag;
  const log = opts.log ?? (() => undefined);
  log(`assembling the sandbox runtime ${tag} (node ${process.version} and git of this host)`);
  const out = await fs.mkdtemp(path.join(os.tmpdir(), 'gatehouse-runtime-'));
  try {
    const script = path.join(projectRoot(), 'images', 'sandbox', 'assemble-runtime.sh');
    const env = {
      ...process.env,
      PATH: `${path.dirname(inputs.node)}:${path.dirname(inputs.git)}:${process.env.PATH}`,
    };
    try {
      await run('bash', [script, path.join(out, 'ctx')], { env, maxBuffer: 16 * 1024 * 1024 });
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new SandboxError(`assembling the sandbox runtime failed: ${(err.stderr ?? err.message).slice(-2000)}`);
    }
    await buildFromDir(d, path.join(out, 'ctx'), tag, { labels: { [IMAGE_SOURCE_LABEL]: projectRoot() } });
  } finally {
    await fs.rm(out, { recursive: true, force: true });
  }
  if (opts.prune ?? true) await pruneSuperseded(d, 'runtime', tag, projectRoot(), log);
  return tag;
}
