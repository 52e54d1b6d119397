import { readFileSync } from 'node:fs';

/**
 * The toolchain image's own environment (its Config.Env: PATH with /usr/local/go/bin, python's
 * variables...), recorded by the orchestrator when it derived the run image, in toolchain-env.json
 * beside the daemon. Commands start from it, so they see the image as its users know it. It is
 * read from that file, never from the daemon's own environment, which holds gatehouse's settings.
 * gatehouse's own names and git's variables are dropped: the sandbox sets those itself.
 */
let imageEnv: Readonly<Record<string, string>> = {};

const DROPPED = /^(GATEHOUSE_|GIT_)/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Where the run image puts it (run-image.ts): beside the daemon, in the runtime's folder. */
export const TOOLCHAIN_ENV_FILE = '/opt/gatehouse/toolchain-env.json';

/** Reads the recorded environment; a missing file (a daemon run outside a run image) means none. */
export function loadImageEnv(file = TOOLCHAIN_ENV_FILE): void {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return;
  }
  setImageEnv(JSON.parse(text) as unknown);
}

export function setImageEnv(value: unknown): void {
  const env: Record<string, string> = {};
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (typeof v === 'string' && NAME.test(k) && !DROPPED.test(k) && !v.includes('\0')) env[k] = v;
    }
  }
  imageEnv = Object.freeze(env);
}

/**
 * The egress proxy's settings, from the orchestrator (GATEHOUSE_PROXY_ENV, JSON) when the sandbox
 * has a way out: added to every command's environment. Only the proxy variables the package
 * managers read are taken, so this cannot be used to set anything else for commands.
 */
export const PROXY_VARIABLES: ReadonlySet<string> = new Set([
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'http_proxy',
  'https_proxy',
  'NO_PROXY',
  'no_proxy',
  'npm_config_proxy',
  'npm_config_https_proxy',
  'npm_config_noproxy',
  'PIP_PROXY',
  'YARN_HTTP_PROXY',
  'YARN_HTTPS_PROXY',
]);

export function addProxyEnv(json: string | undefined): void {
  if (!json) return;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new Error('GATEHOUSE_PROXY_ENV is not JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new Error('GATEHOUSE_PROXY_ENV is not an object');
  const env: Record<string, string> = { ...imageEnv };
  for (const [k, v] of Object.entries(value as Record<string, unknown>))
    if (PROXY_VARIABLES.has(k) && typeof v === 'string' && !v.includes('\0')) env[k] = v;
  imageEnv = Object.freeze(env);
}

export function imageEnvironment(): Readonly<Record<string, string>> {
  return imageEnv;
}
