import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';

/**
 * A second Docker engine on this machine that behaves like a remote host (its own network
 * namespace, reached at 10.213.0.2:2376 over TLS): scripts/second-docker-host.sh does the work,
 * so the soak and the tests share one implementation. start() and stop() are idempotent and
 * bounded; stop() removes the engine, its containers, the netns, the veth and the data root.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const script = path.join(root, 'scripts/second-docker-host.sh');

export interface SecondDockerHost {
  /** DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH for this engine. */
  env: { DOCKER_HOST: string; DOCKER_TLS_VERIFY: string; DOCKER_CERT_PATH: string };
  /** The same engine over SSH: its URL, the client key to give an agent, a known_hosts holding its host key. */
  ssh: { url: string; key: string; knownHosts: string };
  /** The address the engine and its published ports are reached at. */
  address: string;
  /** A client of this engine (never of the main one). */
  docker: Docker;
}

function sh(args: string[], timeoutMs: number): string {
  return execFileSync('bash', [script, ...args], { cwd: root, encoding: 'utf8', timeout: timeoutMs });
}

export function start(): SecondDockerHost {
  const out = sh(['start'], 120_000);
  const env = Object.fromEntries(
    out
      .trim()
      .split('\n')
      .filter((l) => /^DOCKER_[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  ) as SecondDockerHost['env'] & Record<string, string>;
  if (!env.DOCKER_HOST || !env.DOCKER_CERT_PATH)
    throw new Error(`second-docker-host.sh start printed no engine:\n${out}`);
  const url = new URL(env.DOCKER_HOST.replace(/^tcp:/, 'https:'));
  const cert = (name: string) => readFileSync(path.join(env.DOCKER_CERT_PATH, name));
  const docker = new Docker({
    protocol: 'https',
    host: url.hostname,
    port: Number(url.port),
    ca: cert('ca.pem'),
    cert: cert('cert.pem'),
    key: cert('key.pem'),
  });
  const ssh = { url: env.DOCKER_SSH_HOST!, key: env.DOCKER_SSH_KEY!, knownHosts: env.DOCKER_SSH_KNOWN_HOSTS! };
  if (!ssh.url || !ssh.key || !ssh.knownHosts)
    throw new Error(`second-docker-host.sh start printed no SSH engine:\n${out}`);
  const tls = {
    DOCKER_HOST: env.DOCKER_HOST,
    DOCKER_TLS_VERIFY: env.DOCKER_TLS_VERIFY,
    DOCKER_CERT_PATH: env.DOCKER_CERT_PATH,
  };
  return { env: tls, ssh, address: url.hostname, docker };
}

/** Copies these images from the main engine (there is no registry); those already there are skipped. */
export function loadImages(tags: string[]): void {
  sh(['load-images', ...tags], 600_000);
}

export function stop(): void {
  sh(['stop'], 180_000);
}
