import { spawn } from 'node:child_process';
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

/**
 * Whether a repository's .git could hand back what the policy withholds. Its object store can hold
 * a withheld file's content long after the file left the work tree: in history (a secret committed
 * once and deleted since), in a stash, a reflog, the index, or as an unreachable object (added and
 * reset), whose path nobody can tell. So, on the host, before the copy:
 *  - .git may hold only what git's own object store and refs need: anything else (a removed
 *    submodule's repository in modules/, LFS's raw store, rr-cache, alternates pointing at another
 *    store, grafts) can carry content no check below reads;
 *  - every path reachable from any ref, reflog or the index is matched against the rules, with
 *    replace refs and grafts ignored, so history hidden behind `git replace --graft` is walked too;
 *  - any unreachable object at all counts (its path is unknown);
 *  - a git that fails or times out counts too (unknown is not safe).
 * Either way the caller leaves .git out and the sandbox gets a fresh repository.
 */
export async function historyMayHold(
  repoDir: string,
  withholds: (rel: string) => boolean,
): Promise<string | undefined> {
  const gitDir = path.join(repoDir, '.git');
  const st = lstatSync(gitDir, { throwIfNoEntry: false });
  if (!st) return undefined;
  if (!st.isDirectory()) return '.git is not a directory (a linked worktree or submodule); its objects live elsewhere';
  const stray = contentOutsideObjects(gitDir);
  if (stray) return stray;
  const paths = await gitLines(repoDir, ['rev-list', '--all', '--reflog', '--indexed-objects', '--objects'], (line) => {
    const space = line.indexOf(' ');
    const rel = space < 0 ? '' : line.slice(space + 1);
    return rel !== '' && withholds(rel) ? `git history holds ${rel}, which the policy denies reading` : undefined;
  });
  if (paths) return paths;
  return gitLines(repoDir, ['fsck', '--unreachable', '--connectivity-only', '--no-progress'], (line) =>
    line.startsWith('unreachable ')
      ? 'the repository has unreachable objects, whose paths cannot be checked'
      : undefined,
  );
}

/** What a .git holds for git's objects, refs and work tree, and nothing else (red-team finding). */
const GIT_DIR_ENTRIES = new Set([
  'HEAD',
  'config',
  'description',
  'hooks',
  'info',
  'objects',
  'refs',
  'logs',
  'index',
  'packed-refs',
  'COMMIT_EDITMSG',
  'ORIG_HEAD',
  'FETCH_HEAD',
  'branches',
  'shallow',
  'gitk.cache',
]);

/** Why .git could carry content outside what the checks read, or undefined. */
function contentOutsideObjects(gitDir: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(gitDir);
  } catch {
    return '.git cannot be read';
  }
  const other = names.find((n) => !GIT_DIR_ENTRIES.has(n));
  if (other) return `.git/${other} may hold file content outside the object store, which cannot be checked`;
  for (const extra of ['objects/info/alternates', 'objects/info/http-alternates', 'info/grafts']) {
    if (lstatSync(path.join(gitDir, extra), { throwIfNoEntry: false }))
      return `.git/${extra} points git at content the checks do not read`;
  }
  return undefined;
}

const TIMEOUT_MS = 120_000;

/** Runs git in the repository and returns the first verdict a line gives, or a failure's reason. */
function gitLines(
  repoDir: string,
  args: string[],
  verdict: (line: string) => string | undefined,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn('git', ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', ...args], {
      cwd: repoDir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_NO_REPLACE_OBJECTS: '1',
        GIT_GRAFT_FILE: '/dev/null',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_TERMINAL_PROMPT: '0',
        GIT_CEILING_DIRECTORIES: path.dirname(repoDir),
        LC_ALL: 'C',
      },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let found: string | undefined;
    const timer = setTimeout(() => {
      found ??= `git ${args[0]} took longer than ${TIMEOUT_MS / 1000} s`;
      child.kill('SIGKILL');
    }, TIMEOUT_MS);
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (found) return;
      found = verdict(line);
      if (found) child.kill('SIGKILL');
    });
    child.on('error', (e) => {
      found ??= `git could not run: ${e.message}`;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (found === undefined && code !== 0) found = `git ${args[0]} failed (exit ${code})`;
      resolve(found);
    });
  });
}
