import { actionHash, type ApprovalRef, type PrimitiveName } from '@gatehouse/shared';

/**
 * An approval the runtime gives itself for its own bookkeeping (exporting the diff, health checks).
 * Model-proposed actions never get one of these: their approvals come from the policy gate.
 */
export function runtimeApproval(primitive: PrimitiveName, input: unknown, purpose: string): ApprovalRef {
  return { id: `runtime:${purpose}`.slice(0, 128), actionHash: actionHash({ name: primitive, input }), by: 'runtime' };
}
