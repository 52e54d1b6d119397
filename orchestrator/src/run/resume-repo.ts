import { existsSync } from 'node:fs';
import path from 'node:path';
import type { EventDataOf } from '@gatehouse/shared';
import { realRepoPath } from '../events/state-home';
import { repoTree, treeChange } from './repo-tree';
import { ResumeError } from './resume';

export interface ResumeRepoCheck {
  /** Said to the person, not refused: the repository's tree changed since the run started. */
  warning?: string;
}

/**
 * Whether `gatehouse resume RUN` may continue the run where it is asked to. The run continues on
 * the repository it recorded (a fresh copy of it, with the run's workspace put back), so:
 * - `--repo DIR` must be that repository, else refused;
 * - without it, the current directory must be in that repository (checked only when `checkCwd`:
 *   with the default state directory; a named one is addressed by id from anywhere, as CI does);
 * - a tree that changed since the start is a warning, not a refusal: the files the run did not
 *   touch are taken from the repository as it is now, which is often what was wanted (a fixed
 *   dependency), and --apply still refuses to write over what it cannot account for.
 * - unless `treeMustMatch` (a queue worker's run): its repository is the run's snapshot, extracted
 *   where the job said; a changed tree there means a job named another snapshot (forged, or crossed
 *   with another run's), never a fixed dependency, so it is refused before anything runs.
 * Logs of an older gatehouse recorded the path as given (often `.`): nothing can be checked then.
 */
export function checkResumeRepo(
  runId: string,
  started: EventDataOf<'run.started'>,
  o: { repo?: string | undefined; cwd?: string; checkCwd: boolean; treeMustMatch?: boolean },
): ResumeRepoCheck {
  const recorded = started.repo;
  if (recorded === undefined || !path.isAbsolute(recorded)) return {};
  const repo = realRepoPath(recorded);
  const how = `run \`gatehouse resume ${runId} --repo ${repo}\``;
  if (o.repo !== undefined) {
    const given = realRepoPath(o.repo);
    if (given !== repo) throw new ResumeError(`run ${runId} worked on ${repo}; --repo names ${given}; ${how}`);
  } else if (o.checkCwd) {
    const here = realRepoPath(o.cwd ?? process.cwd());
    const rel = path.relative(repo, here);
    if (rel.startsWith('..') || path.isAbsolute(rel))
      throw new ResumeError(`run ${runId} worked on ${repo}; you are in ${here}; ${how}`);
  }
  if (!existsSync(repo))
    throw new ResumeError(`run ${runId} worked on ${repo}, which no longer exists; the run cannot be resumed`);
  const change = started.tree ? treeChange(started.tree, repoTree(repo)) : undefined;
  if (change && o.treeMustMatch)
    throw new ResumeError(
      `the repository ${repo} changed since run ${runId} started: ${change}. A worker continues a run only on the ` +
        'snapshot it started with, so this is not the repository of the run (a job named another snapshot); ' +
        'it is refused. Check who published the job; the run is left as it was',
    );
  if (o.treeMustMatch && !started.tree)
    throw new ResumeError(`run ${runId} records no tree of its repository; a worker cannot check it and refuses it`);
  return change
    ? {
        warning:
          `the repository ${repo} changed since run ${runId} started: ${change}. The run continues on it as it ` +
          'is now (the files the run changed are put back over it)',
      }
    : {};
}
