import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Id } from '@gatehouse/shared';
import { GatehouseError } from '../errors';
import { assertRunId, EVENTS_FILE, runsDir } from './paths';
import { listRuns } from './runs';
import { currentGroup, defaultStateRoot, explicitStateDir, listGroups, realRepoPath, type Env } from './state-home';

/** A run a command was pointed at: the directory holding its `runs/` folder, and its full id. */
export interface ResolvedRun {
  stateDir: string;
  runId: string;
}

export interface RunRefOptions {
  /** --state-dir as given (else $GATEHOUSE_STATE_DIR, else the user's state directory, by repository). */
  stateDir?: string | undefined;
  env?: Env;
  cwd?: string;
}

/** `latest` names the newest top-level run; anything else is a run id or a unique prefix of one. */
export const LATEST = 'latest';

/** No run matches what was given. Refused (exit 1), as an unknown run id always was. */
export class RunNotFoundError extends GatehouseError {
  readonly kind = 'refused';
  constructor(message: string) {
    super(message);
    this.name = 'RunNotFoundError';
  }
}

/** A prefix that fits several runs: a usage error (exit 2) that lists them, so the next try can be exact. */
export class AmbiguousRunError extends GatehouseError {
  readonly kind = 'usage';
  constructor(
    readonly ref: string,
    readonly candidates: readonly string[],
  ) {
    const shown = candidates.slice(0, 10).join(', ');
    const more = candidates.length > 10 ? ` and ${candidates.length - 10} more` : '';
    super(`${JSON.stringify(ref)} matches ${candidates.length} runs: ${shown}${more}; give more of the id`);
    this.name = 'AmbiguousRunError';
  }
}

interface Scope {
  dir: string;
  /** The repository a group belongs to, for listings; undefined for an explicit state directory. */
  repo?: string | undefined;
}

function runIdsIn(stateDir: string): string[] {
  const dir = runsDir(stateDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => Id.safeParse(n).success && existsSync(path.join(dir, n, EVENTS_FILE)));
}

/** The exact id if one scope holds it, else the single run whose id starts with `ref`; undefined when none. */
function find(ref: string, scopes: readonly Scope[]): ResolvedRun | undefined {
  const matches: Array<ResolvedRun & { repo?: string | undefined }> = [];
  for (const s of scopes) {
    for (const id of runIdsIn(s.dir)) {
      if (id === ref) return { stateDir: s.dir, runId: id };
      if (id.startsWith(ref)) matches.push({ stateDir: s.dir, runId: id, repo: s.repo });
    }
  }
  if (matches.length === 1) return { stateDir: matches[0]!.stateDir, runId: matches[0]!.runId };
  if (matches.length > 1)
    throw new AmbiguousRunError(
      ref,
      matches.map((m) => (m.repo && scopes.length > 1 ? `${m.runId} (${m.repo})` : m.runId)).sort(),
    );
  return undefined;
}

/**
 * The one function every command that takes a run id resolves it with. `ref` is `latest` (the
 * newest top-level run of the current repository, or of the explicit state directory), a full run
 * id, or a unique prefix of one. With an explicit state directory only that directory is searched;
 * otherwise the current repository's group first, then every group (an id works from anywhere).
 */
export function resolveRun(ref: string, o: RunRefOptions = {}): ResolvedRun {
  const env = o.env ?? process.env;
  const cwd = o.cwd ?? process.cwd();
  const explicit = explicitStateDir(o.stateDir, env, cwd);
  const root = explicit === undefined ? defaultStateRoot(env) : undefined;
  const here = root === undefined ? undefined : currentGroup(root, cwd);
  const first: Scope[] = explicit !== undefined ? [{ dir: explicit }] : here ? [here] : [];
  const where = explicit ?? `the runs of this repository (${here?.repo ?? realRepoPath(cwd)})`;

  if (ref === LATEST) {
    const newest = first.flatMap((s) =>
      listRuns(s.dir)
        .filter((r) => r.parentRunId === null && r.startedAt !== null)
        .map((r) => ({ stateDir: s.dir, runId: r.runId, startedAt: r.startedAt! })),
    );
    newest.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.runId.localeCompare(b.runId));
    const last = newest.at(-1);
    if (!last)
      throw new RunNotFoundError(
        `"latest": there are no runs in ${where} yet; \`gatehouse runs${explicit ? '' : ' --all'}\` lists them` +
          legacyHint(cwd, explicit),
      );
    return { stateDir: last.stateDir, runId: last.runId };
  }

  assertRunId(ref);
  const found =
    find(ref, first) ??
    (root === undefined
      ? undefined
      : find(
          ref,
          listGroups(root).filter((g) => g.dir !== here?.dir),
        ));
  if (found) return found;
  throw new RunNotFoundError(
    `run ${ref} not found: no run id in ${explicit ?? 'any repository'} is or starts with ${JSON.stringify(ref)}; ` +
      `\`gatehouse runs${explicit ? '' : ' --all'}\` lists them${legacyHint(cwd, explicit)}`,
  );
}

/** Runs of the older layout (`.gatehouse/runs` in the directory) are still readable with --state-dir. */
function legacyHint(cwd: string, explicit: string | undefined): string {
  if (explicit !== undefined || runIdsIn(path.join(cwd, '.gatehouse')).length === 0) return '';
  return ' (runs of the older layout are in ./.gatehouse/runs: add --state-dir .gatehouse to reach them)';
}
