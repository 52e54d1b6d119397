import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { GatehouseError, type ErrorKind } from '../errors';
import { DockerUnavailableError } from './errors';
import { hostKeyVerifier, knownHostKeys, knownHostsFiles } from './ssh-known-hosts';

/**
 * Which Docker engine gatehouse drives: the local socket, or another host's engine over TCP (with
 * TLS) or SSH, the way the docker CLI reads DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH.
 * Everything a run starts (sandboxes, the egress proxy, the `gatehouse-nats` server) goes to it.
 */
export interface DockerHost {
  /** As given, or the default socket's unix:// URL. */
  url: string;
  kind: 'unix' | 'tcp' | 'ssh';
  /** unix: the socket's path. */
  socketPath?: string;
  /** tcp and ssh: the host name or IP the engine (and the ports it publishes) is reached at. */
  address?: string;
  port?: number;
  /** tcp: HTTPS with a client certificate (DOCKER_TLS_VERIFY=1, or port 2376 as docker-modem assumes). */
  tls?: boolean;
  username?: string;
}

export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';
export const DOCKER_HOST_FORMS = 'unix:///path/to/docker.sock, tcp://HOST:PORT or ssh://[USER@]HOST[:PORT]';

/**
 * A Docker host URL that is not one: a usage error (the --docker-host parser turns it into commander's,
 * exit 2); a bad DOCKER_HOST is rethrown as DockerUnavailableError, the environment's.
 */
export class DockerHostSyntaxError extends GatehouseError {
  override readonly name = 'DockerHostSyntaxError';
  readonly kind: ErrorKind = 'usage';
}

/** Parses a Docker host URL; throws DockerHostSyntaxError saying what is accepted. */
export function parseDockerHost(value: string, env: NodeJS.ProcessEnv = process.env): DockerHost {
  const bad = (why: string) =>
    new DockerHostSyntaxError(`"${value}" is not a Docker host (${why}): use ${DOCKER_HOST_FORMS}`);
  const m = /^([a-z]+):\/\/(.*)$/.exec(value.trim());
  if (!m) throw bad('no unix://, tcp:// or ssh:// scheme');
  const [, scheme, rest] = m as unknown as [string, string, string];
  if (scheme === 'unix') {
    if (!rest.startsWith('/')) throw bad('the socket path must be absolute');
    return { url: value, kind: 'unix', socketPath: rest };
  }
  if (scheme !== 'tcp' && scheme !== 'ssh') throw bad(`unknown scheme ${scheme}://`);
  let u: URL;
  try {
    u = new URL(`${scheme === 'tcp' ? 'http' : 'ssh'}://${rest}`);
  } catch {
    throw bad('no valid host');
  }
  const address = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!address) throw bad('no host');
  if ((u.pathname && u.pathname !== '/') || u.search || u.hash) throw bad('a path, query or fragment');
  if (scheme === 'ssh') {
    if (u.password) throw bad('a password in the URL; use an SSH agent (SSH_AUTH_SOCK)');
    return {
      url: value,
      kind: 'ssh',
      address,
      port: u.port ? Number(u.port) : 22,
      ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    };
  }
  if (u.username || u.password) throw bad('a user name; tcp:// engines authenticate with TLS client certificates');
  const tlsVerify = env.DOCKER_TLS_VERIFY === '1';
  const port = u.port ? Number(u.port) : tlsVerify ? 2376 : 2375;
  return { url: value, kind: 'tcp', address, port, tls: tlsVerify || port === 2376 };
}

/** The engine DOCKER_HOST names (the local socket when it is unset). */
export function dockerHostFromEnv(env: NodeJS.ProcessEnv = process.env): DockerHost {
  const value = env.DOCKER_HOST;
  if (!value) return { url: `unix://${DEFAULT_DOCKER_SOCKET}`, kind: 'unix', socketPath: DEFAULT_DOCKER_SOCKET };
  try {
    return parseDockerHost(value, env);
  } catch (e) {
    throw new DockerUnavailableError(`DOCKER_HOST: ${(e as Error).message}`);
  }
}

/**
 * dockerode's options for a host, built here rather than by docker-modem from the environment so
 * that --docker-host and DOCKER_HOST mean the same and a bad certificate path is a clear error.
 */
export function dockerOptions(host: DockerHost, env: NodeJS.ProcessEnv = process.env): Docker.DockerOptions {
  if (host.kind === 'unix') return { socketPath: host.socketPath! };
  if (host.kind === 'ssh') return sshOptions(host, env);
  if (!host.tls) return { protocol: 'http', host: host.address!, port: host.port! };
  const dir = env.DOCKER_CERT_PATH || path.join(os.homedir(), '.docker');
  const read = (name: string) => {
    try {
      return readFileSync(path.join(dir, name));
    } catch (e) {
      throw new DockerUnavailableError(
        `the Docker engine at ${host.url} needs TLS, and ${path.join(dir, name)} cannot be read ` +
          `(${(e as NodeJS.ErrnoException).code ?? String(e)}): set DOCKER_CERT_PATH to the folder holding ` +
          'ca.pem, cert.pem and key.pem for this engine',
      );
    }
  };
  return {
    protocol: 'https',
    host: host.address!,
    port: host.port!,
    ca: read('ca.pem'),
    cert: read('cert.pem'),
    key: read('key.pem'),
  };
}

/**
 * An engine over SSH: docker-modem runs `docker system dial-stdio` on the far side for each
 * request, through ssh2 with the agent's keys. The host key must be in known_hosts (ssh2 would
 * otherwise accept any), and the user defaults to the local one, as `ssh` does.
 */
function sshOptions(host: DockerHost, env: NodeJS.ProcessEnv): Docker.DockerOptions {
  if (!env.SSH_AUTH_SOCK)
    throw new DockerUnavailableError(
      `the Docker engine at ${host.url} is reached over SSH with an agent's keys, and SSH_AUTH_SOCK is not set: ` +
        'start ssh-agent and ssh-add the key that may log in there',
    );
  const files = knownHostsFiles(env);
  const keys = knownHostKeys(host.address!, host.port!, files);
  if (keys.accepted.length === 0)
    throw new DockerUnavailableError(
      `the SSH host key of ${host.address}${host.port === 22 ? '' : ` port ${host.port}`} is not in ` +
        `${files.join(' or ')}: add it (ssh-keyscan -p ${host.port} ${host.address}, after checking its ` +
        "fingerprint with the host's owner), or set GATEHOUSE_SSH_KNOWN_HOSTS to the file that has it",
    );
  return {
    protocol: 'ssh',
    host: host.address!,
    port: host.port!,
    username: host.username ?? os.userInfo().username,
    sshOptions: { agent: env.SSH_AUTH_SOCK, hostVerifier: hostKeyVerifier(keys) },
  };
}

/**
 * Where a container on this engine publishes a port the orchestrator must reach, and where the
 * orchestrator then connects. The local engine: loopback only. Another host's engine: the address
 * the engine is reached at when it is an IP (so only that interface exposes it), else every
 * interface of that host (the orchestrator resolves the name like the Docker client does).
 */
export function publishAddress(host: DockerHost): { bindIp: string; connectHost: string } {
  if (host.kind === 'unix' || isLoopback(host.address!)) return { bindIp: '127.0.0.1', connectHost: '127.0.0.1' };
  const ip = isIP(host.address!) ? host.address! : undefined;
  return { bindIp: ip ?? '0.0.0.0', connectHost: host.address! };
}

function isLoopback(address: string): boolean {
  return address === 'localhost' || address === '::1' || address.startsWith('127.');
}

/** A host for a URL: `[v6]:port` where needed. */
export function hostPort(host: string, port: string | number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}
