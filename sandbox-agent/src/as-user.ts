import type { CommandUser } from './users';

/**
 * Runs a synchronous piece of work on the workspace with the daemon's effective uid and gid
 * switched to the command user's, so the kernel checks it as it would a command: a link planted
 * anywhere on a path leads only where a command could go, a file the policy locks (root's) stays
 * locked, and what is created belongs to the command user. The daemon's real uid stays 0, which is
 * what lets it switch back; capabilities leave the effective set while the euid is not 0 and come
 * back with it. Synchronous only: nothing else of the daemon may run meanwhile.
 * Not root (unit tests on a host): runs as is.
 */
export function asCommandUser<T>(user: CommandUser, work: () => T): T {
  if (process.geteuid?.() !== 0 || !process.seteuid || !process.setegid) return work();
  process.setegid(user.gid);
  process.seteuid(user.uid);
  try {
    return work();
  } finally {
    process.seteuid(0);
    process.setegid(0);
  }
}
