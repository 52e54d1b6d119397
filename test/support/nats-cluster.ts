import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import type Docker from 'dockerode';
import { docker as dockerClient } from '@gatehouse/orchestrator';
import { ownerLabel } from '@gatehouse/shared';
import { freePort } from './free-port';

/**
 * A three-node NATS cluster with JetStream on loopback, for tests: containers of gatehouse's own NATS
 * image on a private Docker network (the nodes route to each other by name), each node's client port
 * published on 127.0.0.1 only. Everything it makes carries gatehouse's labels and goes in `stop()`.
 */
export interface NatsCluster {
  /** nats://127.0.0.1:PORT of each node, in node order. */
  servers: string[];
  /** Stops one node at once (SIGKILL): a lost machine. */
  kill(node: number): Promise<void>;
  /** Starts a killed node again, with its store. */
  restart(node: number): Promise<void>;
  stop(): Promise<void>;
}

const CLIENT = '4222/tcp';

export async function startNatsCluster(image: string, size = 3): Promise<NatsCluster> {
  const docker = dockerClient();
  const tag = Math.random().toString(36).slice(2, 10);
  const labels = { 'gatehouse.role': 'nats', 'gatehouse.owner': ownerLabel(), 'gatehouse.test': 'nats-cluster' };
  const network = await docker.createNetwork({ Name: `gatehouse-test-nats-${tag}`, Labels: labels });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-nats-cluster-'));
  chmodSync(dir, 0o755);
  const names = Array.from({ length: size }, (_, i) => `gh-nats-${tag}-n${i + 1}`);
  const containers: Docker.Container[] = [];
  try {
    for (const [i, name] of names.entries()) {
      const conf = path.join(dir, `n${i + 1}.conf`);
      writeFileSync(
        conf,
        [
          `server_name: n${i + 1}`,
          'listen: 0.0.0.0:4222',
          'jetstream { store_dir: /var/lib/nats/js, max_memory_store: 64MB, max_file_store: 512MB }',
          // One node (size 1) is a plain JetStream server: no cluster block.
          ...(size === 1
            ? []
            : [
                'cluster {',
                '  name: gatehouse-test',
                '  listen: 0.0.0.0:6222',
                `  routes: [${names.map((n) => `nats-route://${n}:6222`).join(', ')}]`,
                '}',
              ]),
        ].join('\n'),
      );
      chmodSync(conf, 0o644);
      const c = await docker.createContainer({
        name,
        Image: image,
        Labels: labels,
        ExposedPorts: { [CLIENT]: {} },
        HostConfig: {
          Binds: [`${conf}:/etc/nats/nats.conf:ro`],
          NetworkMode: network.id,
          // The port is chosen here, not by Docker: Docker picks a new one each time a container starts,
          // so a node restarted with `restart()` would no longer be at its URL (a real server comes back
          // at its address; the soak's store URL must keep working).
          PortBindings: { [CLIENT]: [{ HostIp: '127.0.0.1', HostPort: String(await freePort()) }] },
          Memory: 256 * 1024 * 1024,
        },
      });
      containers.push(c);
      await c.start();
    }
    const servers: string[] = [];
    for (const c of containers) {
      const port = (await c.inspect()).NetworkSettings.Ports[CLIENT]?.[0]?.HostPort;
      if (!port) throw new Error(`NATS node ${c.id} published no client port`);
      servers.push(`nats://127.0.0.1:${port}`);
    }
    return {
      servers,
      kill: async (node) => void (await containers[node]!.kill()),
      restart: async (node) => void (await containers[node]!.start()),
      stop: async () => {
        for (const c of containers) await c.remove({ force: true, v: true }).catch(() => undefined);
        await network.remove().catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    for (const c of containers) await c.remove({ force: true, v: true }).catch(() => undefined);
    await network.remove().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Retries `f` (60 tries, 500 ms apart) while a cluster forms or fails over; the last failure if it never settles. */
export async function settled<T>(f: () => Promise<T>): Promise<T> {
  let last: unknown;
  for (let i = 0; i < 60; i++) {
    try {
      return await f();
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  throw last;
}

/** A connection to `url` once the server answers with JetStream ready (it may still be starting), within `ms`. */
export async function connectWithin(url: string, ms: number): Promise<NatsConnection> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      const c = await connect({ servers: url, timeout: 2000 });
      await c.jetstreamManager().then((m) => m.getAccountInfo());
      return c;
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
