import Docker from 'dockerode';
import { type DockerHost, dockerHostFromEnv, dockerOptions, parseDockerHost } from './docker-host';
import { DockerUnavailableError } from './errors';
import { installKind } from './paths';

/** One client per process, for the engine DOCKER_HOST (or --docker-host) names; docker-host.ts. */
let client: { docker: Docker; host: DockerHost } | undefined;
export function docker(): Docker {
  return connected().docker;
}

/** The engine docker() drives. */
export function dockerHost(): DockerHost {
  return connected().host;
}

function connected(): { docker: Docker; host: DockerHost } {
  if (!client) {
    const host = dockerHostFromEnv();
    client = { docker: new Docker(dockerOptions(host)), host };
  }
  return client;
}

/**
 * Drives the engine at `url` (--docker-host) from now on. It goes into DOCKER_HOST as well, so the
 * scripts gatehouse runs (image builds) and the docker CLI they call use the same engine.
 * Throws DockerHostSyntaxError for a URL that is not one.
 */
export function useDockerHost(url: string): DockerHost {
  parseDockerHost(url);
  process.env.DOCKER_HOST = url;
  client = undefined;
  return dockerHost();
}

export async function assertDockerReachable(d = docker()): Promise<{ version: string; apiVersion: string }> {
  try {
    const v = await d.version();
    return { version: v.Version, apiVersion: v.ApiVersion };
  } catch (e) {
    const host = d === client?.docker ? client.host : undefined;
    const fix =
      host && host.kind !== 'unix'
        ? 'Check that it runs, listens there and that this machine reaches it (docs/docker-hosts.md), or pick ' +
          'another with --docker-host.'
        : DOCKER_START[kindOrCheckout()];
    throw new DockerUnavailableError(
      `cannot reach the Docker engine${host ? ` at ${host.url}` : ''} (${(e as Error).message}). ${fix}`,
    );
  }
}

/** How to get an engine, for a checkout (whose scripts install one) and for an installed package. */
export const DOCKER_START = {
  checkout:
    'Start it (as root on Debian: `npm test` or `npm run demo` install and start docker.io), or set DOCKER_HOST.',
  package:
    'Start it (as root on Debian: `apt-get install -y docker.io && dockerd &`), make sure this user may use its ' +
    'socket, or set DOCKER_HOST; `gatehouse doctor` checks.',
} as const;

function kindOrCheckout(): 'checkout' | 'package' {
  try {
    return installKind();
  } catch {
    return 'checkout';
  }
}

export async function imageExists(name: string, d = docker()): Promise<boolean> {
  try {
    await d.getImage(name).inspect();
    return true;
  } catch {
    return false;
  }
}

/** dockerode reports HTTP errors with a statusCode; 404 and 409 are often expected outcomes. */
export function statusOf(e: unknown): number | undefined {
  return typeof e === 'object' && e !== null && 'statusCode' in e ? Number(e.statusCode) : undefined;
}
