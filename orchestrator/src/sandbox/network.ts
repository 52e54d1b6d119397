import type Docker from 'dockerode';
import { statusOf } from './docker';
import { SandboxError } from './errors';
import { LABEL, labels } from './labels';
import { HOLDER_PREFIX } from './network-holder';

/**
 * A run's private network. `Internal` stops routing beyond it, and `inhibit_ipv4` leaves the host
 * without an address on the bridge, so a sandbox cannot reach services listening on the host
 * either (an internal network alone does not prevent that). NATS is the only other member.
 */
export async function createRunNetwork(
  d: Docker,
  sandboxId: string,
  owner: { runId?: string; pool?: string },
): Promise<Docker.Network> {
  return d
    .createNetwork({
      Name: `gatehouse-net-${sandboxId}`,
      Driver: 'bridge',
      Internal: true,
      CheckDuplicate: true,
      Options: { 'com.docker.network.bridge.inhibit_ipv4': 'true', 'com.docker.network.bridge.enable_icc': 'true' },
      Labels: labels('run-network', {
        ...(owner.runId ? { [LABEL.run]: owner.runId } : {}),
        ...(owner.pool ? { [LABEL.pool]: owner.pool } : {}),
        [LABEL.sandbox]: sandboxId,
      }),
    })
    .catch((e: unknown) => {
      throw OUT_OF_ADDRESS_POOLS.test((e as Error).message ?? '') ? new SandboxError(NO_ADDRESS_POOL_LEFT) : e;
    });
}

/** Docker's words, before 27 and since, for a network it has no address range left for. */
const OUT_OF_ADDRESS_POOLS = /non-overlapping IPv4 address pool|fully subnetted|available predefined network/;

/**
 * Every sandbox has a network of its own, and the engine gives each new network a range from its
 * default address pools: 31 of them (/16s and /20s) unless it was told otherwise, so an engine left
 * at its defaults holds fewer than 31 sandboxes at once.
 */
export const NO_ADDRESS_POOL_LEFT =
  'the Docker engine has no address range left for another network (gatehouse makes one per sandbox, and an ' +
  'engine at its defaults has 31): give it smaller, more numerous ones in /etc/docker/daemon.json, e.g. ' +
  '"default-address-pools": [{"base": "10.200.0.0/16", "size": 28}] for 4096, restart dockerd, and try ' +
  'again (docs/scaling.md); or run fewer sandboxes on this engine at once';

/** Attaches the NATS container and returns its address on the run network. */
export async function attachNats(d: Docker, network: Docker.Network, natsContainer: string): Promise<string> {
  await network.connect({ Container: natsContainer }).catch((e: unknown) => {
    if (statusOf(e) !== 403 && statusOf(e) !== 409) throw e; // already attached
  });
  const info = (await network.inspect()) as { Containers?: Record<string, { Name: string; IPv4Address: string }> };
  const entry = Object.values(info.Containers ?? {}).find(
    (c) => c.Name === natsContainer || c.Name === natsContainer.replace(/^\//, ''),
  );
  const ip = entry?.IPv4Address.split('/')[0];
  if (!ip) throw new SandboxError(`NATS container ${natsContainer} has no address on network ${network.id}`);
  return ip;
}

/** Disconnects every member, then removes the network; tolerant of parts already gone. */
export async function removeNetwork(d: Docker, id: string): Promise<void> {
  const network = d.getNetwork(id);
  // A container still being removed (or a proxy still leaving) can hold an endpoint between the
  // inspect and the remove: Docker answers 403 "has active endpoints". A few bounded tries settle it.
  for (let attempt = 1; ; attempt++) {
    try {
      const info = (await network.inspect()) as {
        Containers?: Record<string, unknown>;
        Labels?: Record<string, string>;
      };
      // The network's holder (network-holder.ts) exists for it alone: it goes, by name, whatever its
      // state (a stopped one is no longer among the network's members).
      const sandboxId = info.Labels?.[LABEL.sandbox];
      if (sandboxId)
        await d
          .getContainer(`${HOLDER_PREFIX}${sandboxId}`)
          .remove({ force: true })
          .catch(() => undefined);
      for (const member of Object.keys(info.Containers ?? {})) {
        await network.disconnect({ Container: member, Force: true }).catch(() => undefined);
      }
      await network.remove();
      return;
    } catch (e) {
      if (statusOf(e) === 404) return;
      if (statusOf(e) !== 403 || attempt >= 4) throw e;
      await new Promise((r) => setTimeout(r, 250 * attempt));
    }
  }
}
