import type Docker from 'dockerode';
import { statusOf } from './docker';
import { SandboxError } from './errors';
import { labels } from './labels';

/** The network egress proxies reach the outside world through; shared by every run, created once. */
export const EGRESS_NETWORK = 'gatehouse-egress-outside';

/**
 * Finds or creates the outside network: an ordinary (routed) bridge. Only proxy containers join
 * it; a sandbox never does. Returns its name.
 */
export async function ensureEgressNetwork(d: Docker): Promise<string> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const info = (await d.getNetwork(EGRESS_NETWORK).inspect()) as { Internal?: boolean; Labels?: object };
      if (info.Internal) {
        throw new SandboxError(
          `the Docker network ${EGRESS_NETWORK} is internal, so the egress proxy could reach nothing; remove it ` +
            `(docker network rm ${EGRESS_NETWORK}) and gatehouse will create it again`,
        );
      }
      return EGRESS_NETWORK;
    } catch (e) {
      if (statusOf(e) !== 404) throw e;
    }
    try {
      await d.createNetwork({
        Name: EGRESS_NETWORK,
        Driver: 'bridge',
        Internal: false,
        CheckDuplicate: true,
        Labels: labels('egress-network'),
      });
      return EGRESS_NETWORK;
    } catch (e) {
      if (statusOf(e) !== 409) throw e; // created meanwhile by another orchestrator: use theirs
    }
  }
  return EGRESS_NETWORK;
}

/**
 * The host's address on the outside network. A listener the host binds there (a local registry,
 * say) is reachable by egress proxies once that address is listed literally; sandboxes never
 * reach it.
 */
export async function egressNetworkGateway(d: Docker): Promise<string> {
  const info = (await d.getNetwork(await ensureEgressNetwork(d)).inspect()) as {
    IPAM?: { Config?: Array<{ Gateway?: string }> };
  };
  const gateway = info.IPAM?.Config?.find((c) => c.Gateway)?.Gateway;
  if (!gateway) throw new SandboxError(`the Docker network ${EGRESS_NETWORK} reports no gateway address`);
  return gateway;
}
