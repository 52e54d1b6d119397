import { spawn } from 'node:child_process';
import path from 'node:path';
import { GIT_PROGRAM_OVERRIDES, gitProgramVariables } from '@gatehouse/shared';

export interface HostGitOptions {
  /** The git directory to use; without it git finds the repository's own from `workTree`. */
  gitDir?: string;
  workTree: string;
  /** For `init`: run in `workTree` without naming it as git's work tree. */
  noWorkTree?: boolean;
  timeoutMs?: number;
  maxBytes?: number;
}

/**
 * Runs git on the host over a repository that may be hostile, and returns its standard output.
 * The repository's config cannot name a program git would run: every program key with a fixed
 * name is overridden on the command line (which beats .git/config and its includes), the global
 * and system configs are not read, and the commands used here (ls-files, init) run no filter,
 * hook, pager or diff driver. The work tree is set explicitly, so `core.worktree` cannot point git
 * elsewhere, and discovery stops at the work tree's parent. Global excludes (core.excludesFile,
 * ~/.config/git/ignore) are off: what is copied depends on the repository, not on this machine.
 */
export function hostGit(args: string[], opts: HostGitOptions): Promise<Buffer> {
  const overrides = [
    ...GIT_PROGRAM_OVERRIDES,
    ['core.excludesFile', '/dev/null'],
    ['core.untrackedCache', 'false'],
    ['core.bare', 'false'],
    ['core.quotePath', 'false'],
    ['safe.directory', '*'],
  ].flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const maxBytes = opts.maxBytes ?? 512 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['--no-optional-locks', ...overrides, ...args], {
      cwd: opts.workTree,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: opts.workTree,
        ...gitProgramVariables(),
        GIT_CONFIG_GLOBAL: '/dev/null',
        ...(opts.noWorkTree ? {} : { GIT_WORK_TREE: opts.workTree }),
        ...(opts.gitDir ? { GIT_DIR: opts.gitDir } : {}),
        GIT_CEILING_DIRECTORIES: path.dirname(opts.workTree),
        GIT_NO_REPLACE_OBJECTS: '1',
        LC_ALL: 'C',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let size = 0;
    let err = '';
    let failure: string | undefined;
    const timer = setTimeout(() => {
      failure ??= `took longer than ${timeoutMs / 1000} s`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) {
        failure ??= `printed more than ${maxBytes} bytes`;
        child.kill('SIGKILL');
      } else out.push(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      if (err.length < 2000) err += c.toString('utf8');
    });
    child.on('error', (e) => (failure ??= `could not run: ${e.message}`));
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failure === undefined && code !== 0) failure = `failed (exit ${code}): ${err.trim().slice(0, 300)}`;
      if (failure !== undefined) reject(new Error(`git ${args[0]} ${failure}`));
      else resolve(Buffer.concat(out));
    });
  });
}

/** Splits `-z` output into paths. */
export function nulPaths(out: Buffer): string[] {
  return out
    .toString('utf8')
    .split('\0')
    .filter((p) => p !== '');
}
