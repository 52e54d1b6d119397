import path from 'node:path';
import { Id } from '@gatehouse/shared';
import { GatehouseError } from '../errors';
import { currentGroup, defaultStateRoot, explicitStateDir, groupDir, realRepoPath } from './state-home';

/**
 * The state directory for the current directory (state-home.ts): --state-dir, else
 * $GATEHOUSE_STATE_DIR, else the group of the repository the directory is in, under the user's
 * state directory. Commands that take a run id use resolveRun (run-ref.ts) instead.
 */
export function resolveStateDir(
  explicit?: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  cwd = process.cwd(),
): string {
  const named = explicitStateDir(explicit, env, cwd);
  if (named !== undefined) return named;
  const root = defaultStateRoot(env);
  return currentGroup(root, cwd)?.dir ?? groupDir(root, realRepoPath(cwd));
}

/** A run id becomes a directory name: only the Id alphabet, so it cannot escape `runs/`. */
export function assertRunId(runId: string): void {
  if (!Id.safeParse(runId).success) throw new InvalidRunIdError(runId);
}

/**
 * Not a run id. Refused rather than a usage error so the exit code stays 1 where it always was;
 * `gatehouse verify` alone reports it as usage (exit 2), as it promises.
 */
export class InvalidRunIdError extends GatehouseError {
  readonly kind = 'refused';
  constructor(readonly runId: string) {
    super(`invalid run id ${JSON.stringify(runId)}: must be 1-64 characters of A-Z a-z 0-9 _ -`);
    this.name = 'InvalidRunIdError';
  }
}

export const runsDir = (stateDir: string): string => path.join(stateDir, 'runs');

export function runDir(stateDir: string, runId: string): string {
  assertRunId(runId);
  return path.join(runsDir(stateDir), runId);
}

export const EVENTS_FILE = 'events.jsonl';
export const ARTIFACTS_DIR = 'artifacts';

export const eventsFile = (stateDir: string, runId: string): string => path.join(runDir(stateDir, runId), EVENTS_FILE);
