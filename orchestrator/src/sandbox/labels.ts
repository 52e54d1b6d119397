/** Every Docker object gatehouse creates carries these labels, so orphans can be found and reaped. */
export const LABEL = {
  role: 'gatehouse.role',
  run: 'gatehouse.run',
  sandbox: 'gatehouse.sandbox',
  /** host:pid:starttime of the orchestrator process that owns the object. */
  owner: 'gatehouse.owner',
  /** The absolute state directory of the sandbox's run (where the reaper saves its workspace). */
  state: 'gatehouse.state',
  /** `never`: an orphan's workspace is not saved (setup's: it may hold what setup wrote with its secrets). */
  salvage: 'gatehouse.salvage',
  /**
   * A warm pool's sandbox (or its network): the pool key (image) it was started for. It has no run label: the
   * run is bound at claim and recorded on the host (pool-claims.ts), where the reaper reads it.
   */
  pool: 'gatehouse.pool',
} as const;

/**
 * egress-proxy: a run phase's proxy container (reaped with its run); egress-network: the one outside
 * network every proxy shares, created once and kept, like the NATS container; network-holder: the
 * container holding a run network's namespace for its sandbox (network-holder.ts), removed with it.
 */
export type Role = 'sandbox' | 'run-network' | 'nats' | 'egress-proxy' | 'egress-network' | 'network-holder';

export { ownerIsDead, ownerLabel } from '@gatehouse/shared';
import { ownerLabel } from '@gatehouse/shared';

export function labels(role: Role, extra: Record<string, string> = {}): Record<string, string> {
  return { [LABEL.role]: role, [LABEL.owner]: ownerLabel(), ...extra };
}
