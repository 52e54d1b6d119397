import { readdirSync, readFileSync } from 'node:fs';

/** The unprivileged user every command runs as; it owns the workspace. */
export interface CommandUser {
  uid: number;
  gid: number;
}

/**
 * Capabilities the daemon needs (see docs/decisions/0001-sandbox-process-separation.md), as bits of
 * /proc/self/status's CapEff: CHOWN 0, DAC_OVERRIDE 1, FOWNER 3, KILL 5, SETGID 6, SETUID 7.
 */
const NEEDED = [0, 1, 3, 5, 6, 7];

/**
 * The daemon refuses to serve unless it is root holding exactly the capabilities it needs: with
 * fewer it cannot start commands as another user (and they would share its uid, the break this
 * design closes); with more, a mistake in the container's options would go unnoticed.
 */
export function checkPrivileges(status = readFileSync('/proc/self/status', 'utf8'), uid = process.getuid?.()): void {
  if (uid !== 0) {
    throw new Error(`the daemon runs as uid ${uid}; it must run as root (uid 0) holding only CHOWN, DAC_OVERRIDE, FOWNER, KILL, SETGID and SETUID, so that commands can run as another user`);
  }
  const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  if (hex === undefined) throw new Error('cannot read the daemon\'s capabilities from /proc/self/status');
  const eff = BigInt(`0x${hex}`);
  const want = NEEDED.reduce((m, bit) => m | (1n << BigInt(bit)), 0n);
  if ((eff & want) !== want) throw new Error(`the daemon lacks capabilities it needs (CapEff ${hex}); start the container with CapAdd CHOWN, DAC_OVERRIDE, FOWNER, KILL, SETGID, SETUID`);
  if ((eff & ~want) !== 0n) throw new Error(`the daemon holds more capabilities than it needs (CapEff ${hex}); start the container with CapDrop ALL and only CHOWN, DAC_OVERRIDE, FOWNER, KILL, SETGID, SETUID added`);
}

/**
 * A command can leave its process group (setsid, set -m, double fork) and outlive the call that
 * started it. When no command is in flight, no process of the command user should exist: every one
 * of them is killed (the daemon holds CAP_KILL). Reading /proc costs microseconds in a sandbox
 * with a handful of processes, less than spawning `kill -1` as that user.
 */
export function killCommandUserProcesses(user: CommandUser): number {
  let killed = 0;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // Real, effective, saved and filesystem uid: any of them being the command user's counts.
    const uids = /^Uid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/).map(Number) ?? [];
    if (!uids.includes(user.uid)) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
      killed++;
    } catch {
      // ESRCH: it ended meanwhile.
    }
  }
  return killed;
}
