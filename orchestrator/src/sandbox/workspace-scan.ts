import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { SAFE_GIT, SAFE_GIT_ENV } from '@gatehouse/shared';
import { SANDBOX_UID, STATE_DIR, WORKSPACE } from './container';
import { SandboxError } from './errors';

/** A workspace path that differs from the sandbox's baseline (the repository as copied in). */
export interface ScannedChange {
  path: string;
  /** As git saw it; only a hint: what is there now is read again through the archive API. */
  status: 'added' | 'modified' | 'deleted' | 'type_changed';
}

export interface ScanResult {
  changes: ScannedChange[];
  /** Root's private scratch folder in the container's /tmp; pass it back to reuse git's stat cache. */
  scratch: string;
}

/**
 * Git run as root in the container, around the daemon: it works on an orphan whose daemon no
 * longer answers us, and a daemon a command took over cannot lie to it. Git gets a fresh git
 * directory of its own (root's, 0700, in the daemon's root-only state directory: not /tmp, which a
 * command can fill, and made without templates), so no config, hook, filter or attribute file a
 * command could have planted is read; a FIFO named .gitignore or .gitattributes (git's blocking
 * open() of one would hang the scan) is removed first, and the whole script is bounded inside the
 * container by `timeout`, so nothing of it is left running when it is cut short; the daemon's
 * baseline is only read (its index, or its tree through the object alternates), never written.
 * Nothing is hashed into objects: `diff-files` compares the work tree with the baseline index by
 * stat and content, and new files come from `ls-files --others` (honouring the workspace's
 * .gitignore, like the daemon's `changes`).
 */
const SCRIPT = `set -eu
S="$1"; shift
if [ -z "$S" ]; then S=$(mktemp -d ${STATE_DIR}/scan.XXXXXXXX); fi
case "$S" in ${STATE_DIR}/scan.*) ;; *) echo "not a scan folder: $S" >&2; exit 3 ;; esac
[ "$(stat -c '%u %a %F' -- "$S")" = "0 700 directory" ] || { echo "$S is not root's private folder" >&2; exit 3; }
export HOME="$S" XDG_CONFIG_HOME="$S"
B=${STATE_DIR}
[ -d "$S/git" ] || "$@" init -q --bare --template= "$S/git"
find ${WORKSPACE} -name .git -prune -o \\( -name .gitignore -o -name .gitattributes \\) -type p -exec rm -f -- {} + >&2
export GIT_DIR="$S/git" GIT_INDEX_FILE="$S/index" GIT_WORK_TREE=${WORKSPACE}
if [ ! -e "$S/index" ]; then
  if [ -s "$B/baseline.index" ]; then cp -- "$B/baseline.index" "$S/index.new"; mv -- "$S/index.new" "$S/index"
  elif [ -s "$B/baseline.tree" ]; then
    echo "$B/baseline.git/objects" > "$GIT_DIR/objects/info/alternates"
    "$@" read-tree "$(head -c 100 "$B/baseline.tree")"
  else echo "the sandbox has no baseline in $B" >&2; exit 4; fi
fi
"$@" update-index -q --refresh >/dev/null 2>&1 || true
printf '%s\\0' "$S"
"$@" diff-files -z --name-status
printf '\\0'
"$@" ls-files -z --others --exclude-standard
`;

/** Options that make git ignore what the work tree could configure, on top of SAFE_GIT. */
const GIT = [
  'git',
  ...SAFE_GIT,
  '-c',
  'core.untrackedCache=false',
  '-c',
  'core.autocrlf=false',
  '-c',
  'core.safecrlf=false',
  '-c',
  'core.symlinks=true',
  '-c',
  'core.ignorecase=false',
  '-c',
  'core.quotePath=false',
  '-c',
  'core.bare=false',
  '-c',
  'safe.directory=*',
  '-c',
  'core.attributesFile=/dev/null',
  '-c',
  'core.excludesFile=/dev/null',
];

const STATUS: Record<string, ScannedChange['status']> = { M: 'modified', D: 'deleted', T: 'type_changed', A: 'added' };

/** Lists what changed in a sandbox's workspace since its baseline (live or orphaned sandbox alike). */
export async function scanWorkspace(
  container: Docker.Container,
  scratch = '',
  timeoutMs = 600_000,
): Promise<ScanResult> {
  // The script's own bound comes first (killing git in the container); the stream's is a backstop.
  const inner = String(Math.max(1, Math.floor(timeoutMs / 1000) - 2));
  const r = await execAsRoot(
    container,
    ['timeout', '-s', 'KILL', inner, 'sh', '-c', SCRIPT, 'gatehouse-scan', scratch, ...GIT],
    timeoutMs,
    256 * 1024 * 1024,
  );
  if (r.exitCode !== 0)
    throw new SandboxError(`listing the workspace's changes failed (exit ${r.exitCode}): ${r.stderr.slice(0, 500)}`);
  const tokens = r.stdout.toString('utf8').split('\0');
  const folder = tokens[0] ?? '';
  const changes: ScannedChange[] = [];
  let i = 1;
  for (; i + 1 < tokens.length && tokens[i] !== ''; i += 2) {
    changes.push({ path: tokens[i + 1]!, status: STATUS[tokens[i]!.charAt(0)] ?? 'modified' });
  }
  for (i += 1; i < tokens.length; i++) {
    const p = tokens[i]!;
    // A nested repository shows as `dir/`: its files are not the run's (git would not track them).
    if (p !== '' && !p.endsWith('/')) changes.push({ path: p, status: 'added' });
  }
  return { changes, scratch: folder };
}

export interface ExecOutcome {
  exitCode: number;
  stdout: Buffer;
  stderr: string;
}

/**
 * Each path's inode change time and inode number, as root (`stat` without -L: a link's own), or
 * '-' for a path that is gone. Docker's stat has only size, mode and mtime, and a command can set
 * mtime back (`touch -d`, `cp -p`); ctime it cannot set, so a file whose content changed is
 * always read again. Callers pass only paths whose folders are real folders (see linkedParent).
 */
export async function changeTimes(
  container: Docker.Container,
  paths: string[],
  timeoutMs = 120_000,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const script = `cd ${WORKSPACE} || exit 3; for p; do stat -c '%z %i' -- "./$p" 2>/dev/null || echo -; done`;
  for (let i = 0; i < paths.length; i += 500) {
    const chunk = paths.slice(i, i + 500);
    const r = await execAsRoot(
      container,
      ['sh', '-c', script, 'gatehouse-ctime', ...chunk],
      timeoutMs,
      16 * 1024 * 1024,
    );
    const lines = r.stdout.toString('utf8').split('\n');
    if (r.exitCode !== 0 || lines.length < chunk.length)
      throw new SandboxError(
        `reading change times in the sandbox failed (exit ${r.exitCode}): ${r.stderr.slice(0, 300)}`,
      );
    chunk.forEach((p, j) => out.set(p, lines[j]!));
  }
  return out;
}

/**
 * Stops every process of the command user (an orphan's last command may still be running): what
 * is saved then cannot change, or swap a folder for a link, while it is read. Bounded: a few rounds.
 */
export async function stopCommandUser(container: Docker.Container): Promise<void> {
  for (let round = 0; round < 3; round++) {
    // `kill -1` as the command user signals every process it owns except the shell itself.
    await execAs(container, String(SANDBOX_UID), ['sh', '-c', 'kill -KILL -1 2>/dev/null; exit 0'], 10_000, 4096);
  }
}

/** `docker exec` as root, no TTY, output captured up to a cap, bounded in time. */
export async function execAsRoot(
  container: Docker.Container,
  cmd: string[],
  timeoutMs: number,
  maxBytes: number,
): Promise<ExecOutcome> {
  return execAs(container, '0', cmd, timeoutMs, maxBytes);
}

async function execAs(
  container: Docker.Container,
  user: string,
  cmd: string[],
  timeoutMs: number,
  maxBytes: number,
): Promise<ExecOutcome> {
  const exec = await container.exec({
    Cmd: cmd,
    User: user,
    AttachStdout: true,
    AttachStderr: true,
    Env: Object.entries(SAFE_GIT_ENV).map(([k, v]) => `${k}=${v}`),
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let size = 0;
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= maxBytes) out.push(c);
  });
  stderr.on('data', (c: Buffer) => {
    if (err.length < 64) err.push(c);
  });
  (
    container.modem as {
      demuxStream(s: NodeJS.ReadableStream, o: NodeJS.WritableStream, e: NodeJS.WritableStream): void;
    }
  ).demuxStream(stream, stdout, stderr);
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => {
        stream.destroy();
        reject(new SandboxError(`${cmd[0]} in the sandbox did not finish within ${timeoutMs} ms`));
      }, timeoutMs);
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', reject);
    });
  } finally {
    clearTimeout(timer);
  }
  if (size > maxBytes) throw new SandboxError(`${cmd[0]} in the sandbox printed more than ${maxBytes} bytes`);
  // The stream can end a moment before Docker records the exit code.
  let info: { ExitCode: number | null; Running: boolean } = await exec.inspect();
  for (let i = 0; i < 100 && info.Running; i++) {
    await new Promise((r) => setTimeout(r, 20));
    info = await exec.inspect();
  }
  return { exitCode: info.ExitCode ?? -1, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') };
}
