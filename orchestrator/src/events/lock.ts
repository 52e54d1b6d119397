import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { ownerIsDead, ownerLabel } from '@gatehouse/shared';
import { GatehouseError } from '../errors';

const LOCK_FILE = 'writer.lock';

/** Another live process writes this run: the command is refused rather than fork its log. */
export class RunLockedError extends GatehouseError {
  readonly kind = 'refused';
  constructor(
    readonly runId: string,
    readonly owner: string,
  ) {
    super(
      `run ${runId} is being written by a live gatehouse process (${owner}); answer its approvals at its prompt or ` +
        `over NATS, or wait for it to stop`,
    );
  }
}

/**
 * One writer per run log: a second process appending to the same chain would fork it. The lock
 * is a file holding `host:pid:starttime`; a lock whose process is gone (killed, crashed) is stale
 * and taken over. Within one process the lock is re-entrant: that code is already coordinated.
 */
export function acquireWriterLock(runDir: string, runId: string): () => void {
  const file = path.join(runDir, LOCK_FILE);
  const me = ownerLabel();
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, me);
      closeSync(fd);
      return () => release(file, me);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let owner = '';
    try {
      owner = readFileSync(file, 'utf8').trim();
    } catch {
      continue; // released meanwhile
    }
    if (owner === me) return () => undefined;
    if (owner !== '' && !ownerIsDead(owner)) throw new RunLockedError(runId, owner);
    rmSync(file, { force: true }); // stale: its writer is gone
  }
  throw new Error(`could not take the writer lock of run ${runId}`);
}

/** The live process that holds a run's writer lock, or undefined when none does (no lock, or a stale one). */
export function writerLockHolder(runDir: string): string | undefined {
  try {
    const owner = readFileSync(path.join(runDir, LOCK_FILE), 'utf8').trim();
    return owner !== '' && !ownerIsDead(owner) ? owner : undefined;
  } catch {
    return undefined;
  }
}

function release(file: string, me: string): void {
  try {
    if (readFileSync(file, 'utf8').trim() === me) rmSync(file, { force: true });
  } catch {
    // already gone
  }
}
