import { promises as fs } from 'node:fs';
import { connect, credsAuthenticator, type NatsConnection } from 'nats';
import type Docker from 'dockerode';
import { putFiles, readFileFrom } from './archive';
import { docker, dockerHost, statusOf } from './docker';
import { hostPort, publishAddress } from './docker-host';
import { SandboxError } from './errors';
import { labels } from './labels';
import { NatsIdentity, newIdentity, operatorPublicKey, orchestratorCreds, serverConfig } from './nats-auth';

export const NATS_CONTAINER = 'gatehouse-nats';
const OPERATOR_LABEL = 'gatehouse.nats.operator';
const IDENTITY_PATH = '/etc/nats/identity.json';

export interface NatsEndpoint {
  /** URL the orchestrator connects to from the host. */
  url: string;
  /** The container that run networks attach so sandboxes can reach NATS. */
  container: string;
  identity: NatsIdentity;
  embedded: boolean;
}

/**
 * Finds the NATS server: NATS_URL if set (a shared server, e.g. from docker-compose), else the
 * embedded `gatehouse-nats` container, started or reused. The embedded container keeps its own
 * identity (operator and account seeds) inside, so any orchestrator on the machine can reuse it.
 */
export async function ensureNatsServer(natsImage: string, env = process.env): Promise<NatsEndpoint> {
  if (env.NATS_URL) return externalServer(env);
  const d = docker();
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await inspect(d);
    if (existing && existing.Config.Image === natsImage && existing.Config.Labels?.[OPERATOR_LABEL]) {
      const container = d.getContainer(existing.Id);
      const identity = NatsIdentity.parse(JSON.parse((await readFileFrom(container, IDENTITY_PATH)).toString('utf8')));
      const url = await waitReachable(container, identity);
      return { url, container: NATS_CONTAINER, identity, embedded: true };
    }
    if (existing)
      await d
        .getContainer(existing.Id)
        .remove({ force: true, v: true })
        .catch(() => undefined);
    try {
      await create(d, natsImage);
    } catch (e) {
      if (statusOf(e) !== 409) throw e; // 409: another orchestrator created it first; reuse theirs
    }
  }
  throw new SandboxError(`could not start or reuse the ${NATS_CONTAINER} container`);
}

async function inspect(d: Docker): Promise<Docker.ContainerInspectInfo | undefined> {
  try {
    return await d.getContainer(NATS_CONTAINER).inspect();
  } catch (e) {
    if (statusOf(e) === 404) return undefined;
    throw e;
  }
}

async function create(d: Docker, image: string): Promise<void> {
  const identity = newIdentity();
  const container = await d.createContainer({
    name: NATS_CONTAINER,
    Image: image,
    Cmd: ['-c', '/etc/nats/nats.conf'],
    Labels: labels('nats', { [OPERATOR_LABEL]: operatorPublicKey(identity) }),
    ExposedPorts: { '4222/tcp': {} },
    HostConfig: {
      // The local engine: loopback only. Another host's engine: the address the orchestrator reaches
      // it at (docker-host.ts); clients there authenticate with per-run credentials as here.
      PortBindings: { '4222/tcp': [{ HostIp: publishAddress(dockerHost()).bindIp, HostPort: '' }] },
      Mounts: [{ Type: 'volume', Source: '', Target: '/etc/nats' }],
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      Memory: 512 * 1024 * 1024,
      PidsLimit: 256,
      RestartPolicy: { Name: 'unless-stopped' },
    },
  });
  // Readable by the server (uid 10002) for the config; the identity stays root-only.
  await putFiles(container, '/etc/nats', [
    { name: 'nats.conf', content: await serverConfig(identity), mode: 0o644 },
    { name: 'identity.json', content: JSON.stringify(identity), mode: 0o600 },
  ]);
  await container.start();
}

async function hostUrl(container: Docker.Container): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const info = await container.inspect();
    const binding = info.NetworkSettings.Ports?.['4222/tcp']?.[0];
    if (binding?.HostPort) return `nats://${hostPort(connectHost(binding.HostIp), binding.HostPort)}`;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new SandboxError(`${NATS_CONTAINER} has no published port`);
}

/** Where the published port is reached: its own address, or for every interface the engine's host. */
function connectHost(boundIp: string | undefined): string {
  if (boundIp && boundIp !== '0.0.0.0' && boundIp !== '::') return boundIp;
  return publishAddress(dockerHost()).connectHost;
}

/**
 * Waits until the container accepts the orchestrator, starting it if it is stopped. Its URL is read
 * again each time: a container its restart policy brought back (or another orchestrator restarted)
 * publishes a new port, and the old one refuses connections.
 */
async function waitReachable(container: Docker.Container, identity: NatsIdentity): Promise<string> {
  const deadline = Date.now() + 30_000;
  let last: unknown;
  let url = '';
  let state = '';
  while (Date.now() < deadline) {
    try {
      const info = await container.inspect();
      const oom = info.State.OOMKilled ? ', killed out of memory' : '';
      state = `${info.State.Status}, ${info.RestartCount} restarts${oom}`;
      if (!info.State.Running) await startIfStopped(container);
      url = await hostUrl(container);
      const nc = await connectOrchestrator(url, identity);
      await nc.close();
      return url;
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const remote =
    dockerHost().kind === 'unix'
      ? ''
      : ` (${NATS_CONTAINER} runs on the Docker host ${dockerHost().url}: this machine must reach the ports it ` +
        'publishes; docs/docker-hosts.md)';
  throw new SandboxError(
    `NATS at ${url || 'its published port'} did not accept a connection in 30 s${remote} ` +
      `(container ${NATS_CONTAINER}: ${state || 'not inspected'}): ${String(last)}. ` +
      `Check it with 'docker logs ${NATS_CONTAINER}'.`,
  );
}

async function startIfStopped(container: Docker.Container): Promise<void> {
  try {
    await container.start();
  } catch (e) {
    if (statusOf(e) !== 304) throw e; // 304: started meanwhile by another orchestrator
  }
}

export async function connectOrchestrator(url: string, identity: NatsIdentity): Promise<NatsConnection> {
  return connect({
    servers: url,
    name: `gatehouse-orchestrator-${process.pid}`,
    authenticator: credsAuthenticator(new TextEncoder().encode(await orchestratorCreds(identity))),
    inboxPrefix: '_INBOX_gatehouse',
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
  });
}

async function externalServer(env: NodeJS.ProcessEnv): Promise<NatsEndpoint> {
  const identityFile = env.GATEHOUSE_NATS_IDENTITY;
  const container = env.GATEHOUSE_NATS_CONTAINER;
  if (!identityFile || !container) {
    throw new SandboxError(
      'NATS_URL is set, so gatehouse uses that server; it also needs GATEHOUSE_NATS_IDENTITY (the identity.json ' +
        'written by `gatehouse nats init`) ' +
        'to mint sandbox credentials, and GATEHOUSE_NATS_CONTAINER (the NATS container name) to attach it to each ' +
        'run network. Unset NATS_URL to use the embedded server.',
    );
  }
  const identity = NatsIdentity.parse(JSON.parse(await fs.readFile(identityFile, 'utf8')));
  return { url: env.NATS_URL!, container, identity, embedded: false };
}
