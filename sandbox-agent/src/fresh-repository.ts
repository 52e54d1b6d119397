import { SAFE_GIT, SAFE_GIT_ENV } from '@gatehouse/shared';
import { scrubbedEnv } from './primitives/env';
import { runProcess } from './process';
import type { CommandUser } from './users';

/**
 * When the policy withheld files, the repository's .git was not copied in (its objects could hold
 * those files). The workspace then gets a fresh repository whose one commit is the workspace as
 * copied, made as the command user, so `git status` and `git diff` work from the start as they
 * would have. History is not available in such a sandbox; the run's summary says why.
 */
export async function startFreshRepository(workspace: string, user: CommandUser, signal: AbortSignal): Promise<void> {
  const git = async (args: string[]): Promise<void> => {
    const run = await runProcess('git', [...SAFE_GIT, ...args], {
      cwd: workspace,
      env: scrubbedEnv({
        ...SAFE_GIT_ENV,
        GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z',
        GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z',
      }),
      timeoutMs: 600_000,
      outputCap: 64 * 1024,
      signal,
      user,
    });
    if (run.exitCode !== 0)
      throw new Error(`git ${args[0]} in the fresh repository failed: ${run.spawnError ?? run.output.slice(0, 500)}`);
  };
  await git(['init', '-q']);
  await git(['add', '-A']);
  await git([
    '-c',
    'user.name=gatehouse',
    '-c',
    'user.email=gatehouse@localhost',
    'commit',
    '-q',
    '--allow-empty',
    '--no-verify',
    '-m',
    'workspace as copied by gatehouse (history withheld: the policy denies reading some files)',
  ]);
}
