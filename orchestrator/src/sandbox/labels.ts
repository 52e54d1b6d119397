/** Every Docker object gatehouse creates carries these labels, so orphans can be found and reaped. */
export const LABEL = {
  role: 'gatehouse.role',
  run: 'gatehouse.run',
  sandbox: 'gatehouse.sandbox',
  /** host:pid:starttime of the orchestrator process that owns the object. */
  owner: 'gatehouse.owner',
  /** The absolute state directory of the sandbox's run (where the reaper saves its workspace). */
  state: 'gatehouse.state',
} as const;

export type Role = 'sandbox' | 'run-network' | 'nats';

export { ownerIsDead, ownerLabel } from '@gatehouse/shared';
import { ownerLabel } from '@gatehouse/shared';

export function labels(role: Role, extra: Record<string, string> = {}): Record<string, string> {
  return { [LABEL.role]: role, [LABEL.owner]: ownerLabel(), ...extra };
}
