import Docker from 'dockerode';
import { DockerUnavailableError } from './errors';
import { installKind } from './paths';

/** One client per process; DOCKER_HOST and friends are honoured by docker-modem. */
let client: Docker | undefined;
export function docker(): Docker {
  client ??= new Docker();
  return client;
}

export async function assertDockerReachable(d = docker()): Promise<{ version: string; apiVersion: string }> {
  try {
    const v = await d.version();
    return { version: v.Version, apiVersion: v.ApiVersion };
  } catch (e) {
    throw new DockerUnavailableError(
      `cannot reach the Docker engine (${(e as Error).message}). ${DOCKER_START[kindOrCheckout()]}`,
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
