import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Who owns a thing (a Docker object, a run log's writer lock): `host:pid:starttime`. The start
 * time makes a reused pid distinguishable from the process that took the lock.
 */
/** The kernel's start time of a process, so a reused pid is not mistaken for its owner. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime); the command name (field 2) may contain spaces, so split after its ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

export function ownerLabel(pid = process.pid): string {
  return `${os.hostname()}:${pid}:${startTimeOf(pid) ?? '0'}`;
}

/** An owner is gone when it ran on this host and that pid no longer runs (or runs something newer). */
export function ownerIsDead(owner: string | undefined): boolean {
  if (!owner) return true;
  const [host, pidText, start] = owner.split(':');
  if (host !== os.hostname()) return false; // another machine's orchestrator: not ours to judge
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return true;
  const current = startTimeOf(pid);
  return current === undefined || current !== start;
}
