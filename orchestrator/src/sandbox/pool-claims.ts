import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { Id } from '@gatehouse/shared';

/**
 * A pooled sandbox is started before its run exists, and a container's labels cannot change: the
 * run it was claimed for is recorded here, on the host, in the state directory its `gatehouse.state`
 * label names, written before the identity is bound. The reaper reads it to save an orphan's
 * workspace into its run; the sandbox cannot touch it. No record: never claimed, nothing to save.
 */
export const PoolClaim = z.object({
  runId: Id,
  sandboxId: Id,
  containerId: z.string(),
  claimedAt: z.string(),
  /**
   * The process driving the claimed sandbox's run (ownerLabel()): a worker's pool hands sandboxes to
   * its run children, so the container's owner label (the worker) says nothing of the run's process.
   */
  owner: z.string().optional(),
});
export type PoolClaim = z.infer<typeof PoolClaim>;

const DIR = 'pool-claims';

function claimFile(stateDir: string, sandboxId: string): string {
  Id.parse(sandboxId); // a label's value becomes a file name: the Id alphabet only
  return path.join(stateDir, DIR, `${sandboxId}.json`);
}

export function recordClaim(stateDir: string, claim: PoolClaim): void {
  mkdirSync(path.join(stateDir, DIR), { recursive: true, mode: 0o700 });
  writeFileSync(claimFile(stateDir, claim.sandboxId), JSON.stringify(claim), { mode: 0o600 });
}

export function readClaim(stateDir: string, sandboxId: string): PoolClaim | undefined {
  try {
    return PoolClaim.parse(JSON.parse(readFileSync(claimFile(stateDir, sandboxId), 'utf8')));
  } catch {
    return undefined;
  }
}

export function removeClaim(stateDir: string, sandboxId: string): void {
  try {
    rmSync(claimFile(stateDir, sandboxId), { force: true });
  } catch {
    // an invalid id has no file
  }
}
