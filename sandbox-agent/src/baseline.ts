import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { existsSync, promises as fs } from 'node:fs';
import { RUNTIME_GIT, RUNTIME_GIT_ENV, SAFE_GIT, SAFE_GIT_ENV } from '@gatehouse/shared';
import { runProcess, type ProcessOutcome } from './process';
import { removeGitFifos } from './git-hazards';
import { scrubbedEnv } from './primitives/env';
import type { CommandUser } from './users';

/**
 * The workspace as it was when the sandbox started, kept as a git tree in a private git directory
 * outside the workspace. It works whether or not the repository has a .git of its own, never
 * touches the repository's index or refs, and honours its .gitignore. `changes` diffs against it.
 */
/**
 * The daemon's own git is the runtime's (RUNTIME_GIT, bundled into every run image, whatever git
 * the toolchain image has or lacks), and it skips the sandbox's git wrapper (images/sandbox/bin/git):
 * it reads only its private git directory, whose config it writes itself before every run (reset
 * below), with global and system config off, so no repository-chosen program can be defined
 * anywhere it looks. The wrapper's extra `git config` round costs every start-up and `changes`
 * several milliseconds. Outside a run image (a daemon started by hand) the system's git serves.
 */
let foundGit: { program: string; env: Readonly<Record<string, string>> } | undefined;
function realGit(): { program: string; env: Readonly<Record<string, string>> } {
  if (foundGit) return foundGit;
  if (existsSync(RUNTIME_GIT)) return (foundGit = { program: RUNTIME_GIT, env: RUNTIME_GIT_ENV });
  for (const dir of ['/usr/bin', '/usr/local/bin', '/bin']) {
    const candidate = path.join(dir, 'git');
    if (existsSync(candidate)) return (foundGit = { program: candidate, env: {} });
  }
  return (foundGit = { program: 'git', env: {} });
}

export class Baseline {
  constructor(
    private readonly workspace: string,
    private readonly stateDir: string,
    private readonly user: CommandUser,
  ) {}

  private get gitDir(): string {
    return path.join(this.stateDir, 'baseline.git');
  }

  /**
   * Records the baseline and returns its tree id. The id is also written to `baseline.tree` (root's,
   * in the root-only state directory) so the orchestrator can salvage a sandbox whose daemon it can
   * no longer talk to, through `docker exec`.
   */
  async record(signal: AbortSignal): Promise<string> {
    await this.init(signal);
    const tree = await this.writeTree('baseline.index', signal, 600_000);
    await fs.writeFile(path.join(this.stateDir, 'baseline.tree'), `${tree}\n`, { mode: 0o600 });
    return tree;
  }

  /**
   * Makes the private git directory. It reads nothing of the workspace, so the daemon starts it
   * before the workspace is complete, off a cold start's path; `record` waits for it (once).
   */
  init(signal: AbortSignal): Promise<void> {
    this.initialized ??= (async () => {
      await fs.chmod(this.stateDir, 0o700);
      await this.git(['init', '-q'], 'baseline.index', signal, 60_000);
    })();
    return this.initialized;
  }

  private initialized: Promise<void> | undefined;

  /**
   * The state directory is root's and commands cannot write it; the config is still put back to a
   * known one before git reads it (so it names no programs to run), as a second line, and the index
   * of a later tree is made afresh from the baseline's own.
   */
  private async reset(index: string): Promise<void> {
    await fs
      .writeFile(
        path.join(this.gitDir, 'config'),
        '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n',
      )
      .catch(() => undefined);
    // Later trees start from the baseline's index, not an empty one: a folder the baseline holds as
    // plain files stays one even after a command puts a .git in it (`git init src`), instead of
    // becoming a nested repository whose files look deleted (red-team finding). git still compares
    // every entry with the work tree (size, mtime, ctime, inode), so a change is not skipped.
    if (index !== 'baseline.index')
      await fs.copyFile(path.join(this.stateDir, 'baseline.index'), path.join(this.stateDir, index));
  }

  /** Runs `work` with the name of an index file no other call uses, and removes it (and its lock) after. */
  async withScratchIndex<T>(work: (index: string) => Promise<T>): Promise<T> {
    const index = `scratch-${randomBytes(8).toString('hex')}.index`;
    try {
      return await work(index);
    } finally {
      const file = path.join(this.stateDir, index);
      await Promise.all([fs.rm(file, { force: true }), fs.rm(`${file}.lock`, { force: true })]);
    }
  }

  async writeTree(index: string, signal: AbortSignal, timeoutMs: number): Promise<string> {
    await this.reset(index);
    removeGitFifos(this.workspace, this.user);
    // --ignore-errors: a nested repository with no commit yet (`git init sub`) cannot be recorded as
    // a gitlink, and without it one such folder would fail every `changes` for the rest of the run
    // (red-team finding). Its files are then not part of the tree; any other error still fails.
    const add = await this.git(
      ['add', '-A', '--ignore-errors', '--', '.'],
      index,
      signal,
      timeoutMs,
      1024 * 1024,
      [0, 1],
    );
    if (add.exitCode === 1) {
      const other = add.output
        .split('\n')
        .filter((l) => l.trim() !== '' && !/does not have a commit checked out|^fatal: adding files failed$/.test(l));
      if (other.length > 0) throw new Error(`git add failed: ${other.slice(0, 5).join('; ').slice(0, 500)}`);
    }
    const out = await this.git(['write-tree'], index, signal, timeoutMs);
    return out.stdout.trim();
  }

  async git(
    args: string[],
    index: string,
    signal: AbortSignal,
    timeoutMs: number,
    outputCap = 1024 * 1024,
    okExits: readonly number[] = [0],
  ): Promise<ProcessOutcome> {
    const git = realGit();
    const run = await runProcess(
      git.program,
      [
        ...SAFE_GIT,
        '-c',
        'core.quotePath=false',
        '-c',
        'core.autocrlf=false',
        '-c',
        `safe.directory=*`,
        `--git-dir=${this.gitDir}`,
        `--work-tree=${this.workspace}`,
        ...args,
      ],
      {
        cwd: this.workspace,
        // As root: without the image's variables (scrubbedEnv's image: false).
        env: {
          ...scrubbedEnv({ GIT_INDEX_FILE: path.join(this.stateDir, index), ...SAFE_GIT_ENV }, { image: false }),
          ...git.env,
        },
        timeoutMs,
        outputCap,
        signal,
      },
    );
    if (run.exitCode === null || !okExits.includes(run.exitCode)) {
      const why = run.timedOut ? 'timed out' : run.aborted ? 'cancelled' : (run.spawnError ?? run.output.slice(0, 500));
      throw new Error(`git ${args[0]} failed: ${why}`);
    }
    return run;
  }
}
