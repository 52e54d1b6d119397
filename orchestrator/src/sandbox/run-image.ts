import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { docker, imageExists, statusOf } from './docker';
import { SandboxError } from './errors';
import { checkDeclaredVolumes } from './image-volumes';
import { buildFromDir } from './image-build';
import { IMAGE_SOURCE_LABEL, pruneStaleRunImages } from './image-prune';
import { projectRoot } from './paths';
import { ensureRuntimeImage, runtimeArchitecture, runtimeImageTag, type RuntimeOptions } from './runtime-image';

/** Labels of a run image: the runtime it carries and the toolchain image it was derived from. */
export const RUN_IMAGE_LABEL = { runtime: 'gatehouse.runtime', toolchain: 'gatehouse.toolchain' } as const;

const NODE = '/opt/gatehouse/runtime/bin/node';
/**
 * How root's node always starts: with the runtime's empty OpenSSL configuration, not the toolchain
 * image's /etc/ssl/openssl.cnf (its nodejs_conf section could load a library) nor OPENSSL_CONF.
 */
const ROOT_NODE = [NODE, '--openssl-config=/opt/gatehouse/openssl.cnf'];

/**
 * Variables that make node, the dynamic loader, bash, sh or git load or run a file they name (or
 * write where they say), emptied in the run image so that no process of root's reads the
 * toolchain's. Only those for which empty means unset: GIT_DIR, GIT_EXEC_PATH, GIT_SSH and the like
 * cannot be emptied without breaking git, and gatehouse's own git sets those it uses.
 */
export const ROOT_ENV_CLEARED = [
  'NODE_OPTIONS',
  'NODE_PATH',
  // Files root's node would write where the image says (warnings, coverage) or read at start.
  'NODE_REDIRECT_WARNINGS',
  'NODE_V8_COVERAGE',
  'NODE_ICU_DATA',
  'NODE_EXTRA_CA_CERTS',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'GCONV_PATH',
  'BASH_ENV',
  'ENV',
  'PS4',
  'SHELLOPTS',
  'BASHOPTS',
  'PROMPT_COMMAND',
  'GIT_CONFIG_PARAMETERS',
  'GIT_TRACE',
  'GIT_TRACE_PACKET',
  'GIT_TRACE_PERFORMANCE',
  'GIT_TRACE_SETUP',
  'GIT_TRACE2',
  'GIT_TRACE2_EVENT',
  'GIT_TRACE2_PERF',
] as const;

/**
 * The run image for a toolchain image (present locally: resolveToolchainImage pulls or builds it):
 * `gatehouse/run:<hash of runtime tag + toolchain image id>`, FROM the toolchain image with the
 * runtime's /opt/gatehouse copied in, prepared by the bundled node (prepare.mjs: user 10001,
 * /workspace, /var/gatehouse, and a refusal of an image without bash), the daemon as entrypoint.
 * The toolchain's own Config.Env goes in as /opt/gatehouse/toolchain-env.json: commands start from
 * it (sandbox-agent/src/image-env.ts). Never rebuilt while neither the runtime nor the image changed.
 */
export async function ensureRunImage(toolchain: string, opts: RuntimeOptions = {}): Promise<string> {
  const runtime = await ensureRuntimeImage(opts);
  const d = docker();
  const { tag, dockerfile, env } = await runImagePlan(d, runtime, toolchain);
  let pending = building.get(tag);
  if (!pending) {
    pending = build(d, tag, { dockerfile, env, runtime, toolchain }, opts);
    building.set(tag, pending);
    pending.catch(() => building.delete(tag));
  }
  return pending;
}

const building = new Map<string, Promise<string>>();

/** The run image's tag for a toolchain image that is present, without building anything (doctor). */
export async function runImageTag(toolchain: string): Promise<string> {
  return (await runImagePlan(docker(), await runtimeImageTag(), toolchain)).tag;
}

async function runImagePlan(
  d: Docker,
  runtime: string,
  toolchain: string,
): Promise<{ tag: string; dockerfile: string; env: string }> {
  const info = await inspectToolchain(d, toolchain);
  const env = JSON.stringify(envObject(info.Config?.Env ?? []), null, 2);
  const dockerfile = runDockerfile(runtime, info.Id);
  const hash = createHash('sha256').update(dockerfile).update('\0').update(env).digest('hex').slice(0, 12);
  return { tag: `gatehouse/run:${hash}`, dockerfile, env };
}

async function inspectToolchain(d: Docker, toolchain: string): Promise<Docker.ImageInspectInfo> {
  let info: Docker.ImageInspectInfo;
  try {
    info = await d.getImage(toolchain).inspect();
  } catch (e) {
    if (statusOf(e) === 404)
      throw new SandboxError(`image ${toolchain} is not present locally: resolve it first (resolveToolchainImage)`);
    throw e;
  }
  const arch = runtimeArchitecture();
  if (info.Os !== 'linux' || info.Architecture !== arch)
    throw new SandboxError(
      `image ${toolchain} is for ${info.Os}/${info.Architecture}, but gatehouse's sandbox runtime (this host's node ` +
        `and git) is linux/${arch}: use an image built for linux/${arch}.`,
    );
  checkDeclaredVolumes(toolchain, Object.keys(info.Config?.Volumes ?? {}));
  return info;
}

function envObject(list: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of list) {
    const i = entry.indexOf('=');
    if (i > 0) env[entry.slice(0, i)] = entry.slice(i + 1);
  }
  return env;
}

/**
 * Exec forms only: the image may have no shell the build could use. The toolchain's CMD would be
 * passed to the daemon as arguments, so ENTRYPOINT resets it; its health check would run commands
 * nobody asked for, so it is switched off.
 */
function runDockerfile(runtime: string, toolchainId: string): string {
  return [
    `FROM ${runtime} AS gatehouse-runtime`,
    `FROM ${toolchainId}`,
    'USER 0:0',
    // The toolchain's ENV is inherited by everything root runs here: this build step, the daemon and
    // the orchestrator's `docker exec` helpers. None of it may name code to load or run (the toolchain's
    // values reach commands through toolchain-env.json, as the command user's own business).
    `ENV ${ROOT_ENV_CLEARED.map((name) => `${name}=""`).join(' ')}`,
    'COPY --from=gatehouse-runtime /opt/gatehouse /opt/gatehouse',
    'COPY toolchain-env.json /opt/gatehouse/toolchain-env.json',
    `RUN ${JSON.stringify([...ROOT_NODE, '/opt/gatehouse/prepare.mjs'])}`,
    'WORKDIR /workspace',
    'HEALTHCHECK NONE',
    'STOPSIGNAL SIGTERM',
    `ENTRYPOINT ${JSON.stringify([...ROOT_NODE, '/opt/gatehouse/agent.mjs'])}`,
    '',
  ].join('\n');
}

async function build(
  d: Docker,
  tag: string,
  ctx: { dockerfile: string; env: string; runtime: string; toolchain: string },
  opts: RuntimeOptions,
): Promise<string> {
  if (await imageExists(tag, d)) return tag;
  const log = opts.log ?? (() => undefined);
  log(`deriving ${tag} from ${ctx.toolchain} with ${ctx.runtime}`);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gatehouse-run-'));
  try {
    await fs.writeFile(path.join(dir, 'Dockerfile'), ctx.dockerfile);
    await fs.writeFile(path.join(dir, 'toolchain-env.json'), ctx.env, { mode: 0o644 });
    await buildFromDir(d, dir, tag, {
      labels: {
        [IMAGE_SOURCE_LABEL]: projectRoot(),
        [RUN_IMAGE_LABEL.runtime]: ctx.runtime,
        [RUN_IMAGE_LABEL.toolchain]: ctx.toolchain,
      },
    });
  } catch (e) {
    throw e instanceof SandboxError && /gatehouse: /.test(e.message)
      ? new SandboxError(
          `image ${ctx.toolchain} cannot be used for a sandbox: ${e.message.split('\n').slice(1).join(' ')}`,
        )
      : e;
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
  if (opts.prune ?? true) await pruneStaleRunImages(d, RUN_IMAGE_LABEL.runtime, ctx.runtime, projectRoot(), log);
  return tag;
}
