import type Docker from 'dockerode';
import { LABEL, labels } from './labels';

/** A holder's container name: `gatehouse-nethold-<sandbox id>` (removeNetwork removes it by this). */
export const HOLDER_PREFIX = 'gatehouse-nethold-';

/**
 * A container that only holds a run network's namespace, started with the network ahead of its
 * sandbox (network-pool.ts), as a pod's pause container does. The sandbox then joins this
 * namespace (`NetworkMode: container:<holder>`) instead of being attached to the network itself:
 * Docker's attach to a user-defined network (the veth, the embedded DNS resolver's rules in the
 * container's namespace) cost 55–70 ms of every `docker start` here, and is paid off the start's path.
 *
 * It runs `sleep` from the NATS image (Debian's coreutils) as nobody, without capabilities, on a
 * read-only root, with small memory and pid caps: nothing in it listens or reads. The sandbox shares only
 * its network namespace (and so its address, resolv.conf and hosts), not its processes or files.
 * It goes with its network (network.ts removeNetwork), so the reaper's network sweep takes it too.
 */
export async function startNetworkHolder(
  d: Docker,
  image: string,
  network: Docker.Network,
  sandboxId: string,
): Promise<Docker.Container> {
  const container = await d.createContainer({
    name: `${HOLDER_PREFIX}${sandboxId}`,
    Image: image,
    Entrypoint: ['sleep', 'infinity'],
    Cmd: [],
    User: '65534:65534',
    Labels: labels('network-holder', { [LABEL.sandbox]: sandboxId }),
    NetworkingConfig: { EndpointsConfig: { [network.id]: {} } },
    HostConfig: {
      NetworkMode: network.id,
      // As the sandbox had them (container.ts): its lookups of outside names fail at once.
      Dns: ['127.0.0.1'],
      DnsOptions: ['timeout:1', 'attempts:1'],
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      // Caps, not reservations (`sleep` uses about 1 MiB): they must leave room for runc's own
      // start inside the container's cgroups, which copies the runc binary into memory and runs Go
      // threads there. At 16 MiB and 4 pids, about 1 start in 100 here died in runc init under
      // load ("cannot start a stopped process"; moby/moby#41164).
      Memory: 64 * 1024 * 1024,
      MemorySwap: 64 * 1024 * 1024,
      PidsLimit: 32,
      IpcMode: 'private',
      AutoRemove: false,
    },
  });
  try {
    await container.start();
    return container;
  } catch (e) {
    await container.remove({ force: true }).catch(() => undefined);
    throw e;
  }
}
