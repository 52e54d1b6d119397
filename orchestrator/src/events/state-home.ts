import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GatehouseError } from '../errors';
import { keyLocation } from './key';

/**
 * Where runs are kept. Two layouts:
 * - explicit (`--state-dir DIR` or `$GATEHOUSE_STATE_DIR`): `DIR/runs/<id>`, as always, whatever the
 *   repository; scripts and CI that name a directory keep reading and writing it.
 * - default: the user's state directory (`$XDG_STATE_HOME/gatehouse`, else `~/.local/state/gatehouse`),
 *   one group per repository, `<root>/repos/<name>-<hash>/runs/<id>`, so runs never land in a
 *   repository (nor in its `git status`). A group's `repo.json` names the repository it belongs to.
 * Either way the directory a run's code is given (`stateDir`) is the one holding `runs/`: a group
 * in the default layout, so a run's sub-agents land beside it with no change to how they are written.
 */

export type Env = Readonly<Record<string, string | undefined>>;

/** The state directory named by the flag or the environment, absolute; undefined when neither names one. */
export function explicitStateDir(flag?: string, env: Env = process.env, cwd = process.cwd()): string | undefined {
  const dir = flag ?? (env.GATEHOUSE_STATE_DIR || undefined);
  return dir === undefined ? undefined : path.resolve(cwd, dir);
}

/** `$XDG_STATE_HOME/gatehouse`, else `$HOME/.local/state/gatehouse`. */
export function defaultStateRoot(env: Env = process.env): string {
  const base = env.XDG_STATE_HOME || path.join(env.HOME || os.homedir(), '.local', 'state');
  const root = path.resolve(base, 'gatehouse');
  // The key must not sit inside the logs it protects (LogKey.load checks each group; this the root).
  const { keyFile, headsDir } = keyLocation(env);
  for (const [what, p] of [
    ['log key', keyFile],
    ['heads directory', headsDir],
  ] as const) {
    const rel = path.relative(root, p);
    if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel)))
      throw new StateDirError(
        `the ${what} ${p} is inside the state directory ${root}: whoever can edit the logs could reach it. ` +
          'Set XDG_STATE_HOME (or GATEHOUSE_STATE_DIR) to another place, or GATEHOUSE_KEY_FILE outside it.',
      );
  }
  return root;
}

/** The state directory cannot be used as configured. */
export class StateDirError extends GatehouseError {
  readonly kind = 'environment';
  constructor(message: string) {
    super(message);
    this.name = 'StateDirError';
  }
}

/** A repository's identity: its absolute path with every symbolic link resolved (as far as it exists). */
export function realRepoPath(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

export const reposDir = (root: string): string => path.join(root, 'repos');

/** `<basename>-<first 12 hex of sha256(real path)>`: readable, and unique per repository path. */
export function groupName(repoReal: string): string {
  const base =
    path
      .basename(repoReal)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 40) || 'root';
  return `${base}-${createHash('sha256').update(repoReal).digest('hex').slice(0, 12)}`;
}

export const groupDir = (root: string, repoReal: string): string => path.join(reposDir(root), groupName(repoReal));

const META_FILE = 'repo.json';

export interface RepoGroup {
  /** The group's directory: it holds `runs/` (a run's `stateDir`). */
  dir: string;
  /** The repository's real path, from the group's repo.json (undefined when that is missing or unreadable). */
  repo: string | undefined;
}

export function readGroupRepo(group: string): string | undefined {
  try {
    const meta = JSON.parse(readFileSync(path.join(group, META_FILE), 'utf8')) as { repo?: unknown };
    return typeof meta.repo === 'string' ? meta.repo : undefined;
  } catch {
    return undefined;
  }
}

/** The group a new run of this repository is written to, created (0700) with its repo.json. */
export function ensureGroup(root: string, repoReal: string): string {
  const dir = groupDir(root, repoReal);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (readGroupRepo(dir) !== repoReal) {
    const tmp = path.join(dir, `.${META_FILE}.${process.pid}`);
    writeFileSync(tmp, `${JSON.stringify({ repo: repoReal, created: new Date().toISOString() })}\n`);
    renameSync(tmp, path.join(dir, META_FILE));
  }
  return dir;
}

/** Every group under the root, in name order. */
export function listGroups(root: string): RepoGroup[] {
  const dir = reposDir(root);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort()
    .map((name) => ({ dir: path.join(dir, name), repo: readGroupRepo(path.join(dir, name)) }));
}

/**
 * The group of the repository the directory is in: the nearest of it and its parents that has a
 * group (so `gatehouse show latest` works from a sub-folder of the repository a run was started in).
 */
export function currentGroup(root: string, cwd = process.cwd()): RepoGroup | undefined {
  for (let dir = realRepoPath(cwd); ; dir = path.dirname(dir)) {
    const group = groupDir(root, dir);
    if (existsSync(group)) return { dir: group, repo: readGroupRepo(group) ?? dir };
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * Where a new run of `repoDir` is written: the explicit state directory if one is named, else the
 * repository's group (created).
 */
export function stateDirForRun(
  repoDir: string,
  o: { flag?: string | undefined; env?: Env; cwd?: string } = {},
): string {
  const env = o.env ?? process.env;
  return explicitStateDir(o.flag, env, o.cwd) ?? ensureGroup(defaultStateRoot(env), realRepoPath(repoDir));
}
