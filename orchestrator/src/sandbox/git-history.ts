import { spawn } from 'node:child_process';
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

/**
 * Whether a repository's .git could hand back what the policy withholds. Its object store can hold
 * a withheld file's content long after the file left the work tree: in history (a secret committed
 * once and deleted since), in a stash, a reflog, the index, or as an unreachable object (added and
 * reset), whose path nobody can tell. So, on the host, before the copy:
 *  - every path reachable from any ref, reflog or the index is matched against the rules;
 *  - any unreachable object at all counts (its path is unknown);
 *  - a git that fails or times out counts too (unknown is not safe).
 * Either way the caller leaves .git out and the sandbox gets a fresh repository.
 */
export async function historyMayHold(repoDir: string, withholds: (rel: string) => boolean): Promise<string | undefined> {
  const gitDir = path.join(repoDir, '.git');
  const st = lstatSync(gitDir, { throwIfNoEntry: false });
  if (!st) return undefined;
  if (!st.isDirectory()) return '.git is not a directory (a linked worktree or submodule); its objects live elsewhere';
  const paths = await gitLines(repoDir, ['rev-list', '--all', '--reflog', '--indexed-objects', '--objects'], (line) => {
    const space = line.indexOf(' ');
    const rel = space < 0 ? '' : line.slice(space + 1);
    return rel !== '' && withholds(rel) ? `git history holds ${rel}, which the policy denies reading` : undefined;
  });
  if (paths) return paths;
  return gitLines(repoDir, ['fsck', '--unreachable', '--connectivity-only', '--no-progress'], (line) =>
    line.startsWith('unreachable ') ? 'the repository has unreachable objects, whose paths cannot be checked' : undefined,
  );
}

const TIMEOUT_MS = 120_000;

/** Runs git in the repository and returns the first verdict a line gives, or a failure's reason. */
function gitLines(repoDir: string, args: string[], verdict: (line: string) => string | undefined): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn('git', ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', ...args], {
      cwd: repoDir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', GIT_CEILING_DIRECTORIES: path.dirname(repoDir), LC_ALL: 'C' },
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
