import type Docker from 'dockerode';
import { StdinBinding } from './bind-stdin';
import { sandboxContainerOptions, type ContainerSpec } from './container';
import type { NatsEndpoint } from './nats-server';
import { attachNats, createRunNetwork, removeNetwork } from './network';
import type { PreparedNetwork } from './network-pool';

/** A sandbox container started and waiting for its run's identity (run-identity.ts). */
export interface StartedSandbox {
  sandboxId: string;
  image: string;
  /** The image's id when it was started: a pooled sandbox of a rebuilt image is stale. */
  imageId: string;
  network: Docker.Network;
  container: Docker.Container;
  /** A cold start's stdin, where its binding is written (bind-stdin.ts); a pooled sandbox has none. */
  stdin?: StdinBinding;
}

export type StartSpec = Omit<ContainerSpec, 'network' | 'natsUrl'> & {
  imageId: string;
  /** A network made ahead for this sandbox id (network-pool.ts): the network phase is skipped. */
  prepared?: PreparedNetwork;
};

/**
 * Its own internal network with NATS attached, then the container, created and started. The
 * daemon inside loads and then waits, holding nothing, until an identity is bound. On failure
 * nothing is left behind.
 */
export async function startSandboxContainer(
  d: Docker,
  nats: NatsEndpoint,
  spec: StartSpec,
  mark: (phase: string) => void = () => undefined,
): Promise<StartedSandbox> {
  let network: Docker.Network | undefined;
  let container: Docker.Container | undefined;
  let attaching: Promise<StdinBinding> | undefined;
  try {
    let natsIp: string;
    let networkHolder: string | undefined;
    if (spec.prepared) {
      if (spec.prepared.sandboxId !== spec.sandboxId)
        throw new Error('a prepared network is for its own sandbox id only');
      network = spec.prepared.network;
      natsIp = spec.prepared.natsIp;
      networkHolder = spec.prepared.holder.id;
    } else {
      network = await createRunNetwork(d, spec.sandboxId, {
        ...(spec.runId ? { runId: spec.runId } : {}),
        ...(spec.pool ? { pool: spec.pool } : {}),
      });
      natsIp = await attachNats(d, network, nats.container);
    }
    mark('network');
    const { imageId: _imageId, prepared: _prepared, ...containerSpec } = spec;
    container = await d.createContainer(
      sandboxContainerOptions({
        ...containerSpec,
        network: network.id,
        ...(networkHolder ? { networkHolder } : {}),
        natsUrl: `nats://${natsIp}:4222`,
      }),
    );
    mark('create');
    attaching = spec.bindOverStdin ? StdinBinding.attach(container, spec.sandboxId) : undefined;
    const [attached] = await Promise.all([attaching, container.start()]);
    mark('start');
    return {
      sandboxId: spec.sandboxId,
      image: spec.image,
      imageId: spec.imageId,
      network,
      container,
      ...(attached ? { stdin: attached } : {}),
    };
  } catch (e) {
    // An attach that is still on its way when the start fails is closed when it arrives.
    void attaching?.then(
      (b) => b.close(),
      () => undefined,
    );
    if (container) await container.remove({ force: true, v: true }).catch(() => undefined);
    if (network) await removeNetwork(d, network.id).catch(() => undefined);
    throw e;
  }
}

/** Removes a started sandbox and its network; tolerant of parts already gone. */
export async function removeStarted(
  d: Docker,
  s: Pick<StartedSandbox, 'container' | 'network' | 'stdin'>,
): Promise<void> {
  s.stdin?.close();
  await s.container.remove({ force: true, v: true }).catch(() => undefined);
  await removeNetwork(d, s.network.id).catch(() => undefined);
}
