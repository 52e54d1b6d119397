import { spawn } from 'node:child_process';
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
    throw new Error(
      `the daemon runs as uid ${uid}; it must run as root (uid 0) holding only CHOWN, DAC_OVERRIDE, FOWNER, KILL, ` +
        `SETGID and SETUID, so that commands can run as another user`,
    );
  }
  const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  if (hex === undefined) throw new Error("cannot read the daemon's capabilities from /proc/self/status");
  const eff = BigInt(`0x${hex}`);
  const want = NEEDED.reduce((m, bit) => m | (1n << BigInt(bit)), 0n);
  if ((eff & want) !== want)
    throw new Error(
      `the daemon lacks capabilities it needs (CapEff ${hex}); start the container with CapAdd CHOWN, DAC_OVERRIDE, ` +
        `FOWNER, KILL, SETGID, SETUID`,
    );
  if ((eff & ~want) !== 0n)
    throw new Error(
      `the daemon holds more capabilities than it needs (CapEff ${hex}); start the container with CapDrop ALL and ` +
        `only CHOWN, DAC_OVERRIDE, FOWNER, KILL, SETGID, SETUID added`,
    );
}

/**
 * Ends every process of the command user once no command is in flight. A command can leave its
 * process group (setsid, double fork) and outlive its call, and a chain that forks its next
 * generation and exits at once is never where a scan of /proc looks (red-team finding). So:
 *  1. the pids cgroup's counter (atomic) is compared with what must exist — tini and the daemon's
 *     own threads; equal means nothing else runs, which is the common case and costs two reads;
 *  2. otherwise `kill(-1, SIGKILL)` is sent *as the command user*: the kernel delivers it to every
 *     process of that uid under its task-list lock, and a fork racing it is aborted, so no
 *     generation escapes; then /proc is checked for any left (bounded retries).
 * Returns how many sweeps it took (0: nothing was left).
 */
export async function sweepCommandUser(user: CommandUser, maxSweeps = 5): Promise<number> {
  let sweeps = 0;
  while (othersMayRun() && commandUserPids(user).length > 0 && sweeps < maxSweeps) {
    await killAllAs(user);
    sweeps++;
  }
  return sweeps;
}

/** Whether the container holds tasks besides tini and the daemon's threads (true if unknown). */
function othersMayRun(): boolean {
  const current = readNumber('/sys/fs/cgroup/pids/pids.current') ?? readNumber('/sys/fs/cgroup/pids.current');
  const threads = Number(/^Threads:\s+(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN);
  if (current === undefined || !Number.isFinite(threads)) return true;
  return current > threads + 1;
}

function readNumber(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Live (not zombie) processes whose real, effective, saved or filesystem uid is the command user's. */
function commandUserPids(user: CommandUser): number[] {
  const found: number[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return found;
  }
  for (const pid of pids) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    if (/^State:\s+Z/m.test(status)) continue;
    const uids = /^Uid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/).map(Number) ?? [];
    if (uids.includes(user.uid)) found.push(Number(pid));
  }
  return found;
}

/** `kill -9 -1` run as the command user: every process of that uid, itself included. */
function killAllAs(user: CommandUser): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('/bin/bash', ['-c', 'kill -9 -1'], {
      uid: user.uid,
      gid: user.gid,
      stdio: 'ignore',
      env: { PATH: '/usr/bin:/bin' },
    });
    const timer = setTimeout(() => resolve(), 2000);
    child.on('error', () => {
      clearTimeout(timer);
      resolve();
    });
    child.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
