import { lstatSync, mkdtempSync, readdirSync, readlinkSync, rmSync, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathPattern } from '../policy/rules';
import { hostGit, nulPaths } from './host-git';
import { linkLeaves } from './link-scope';

/** A path left out of the copy and why (ignored paths come aggregated: `node_modules/`, not its files). */
export interface SkippedPath {
  path: string;
  reason: string;
}

export interface CopyListOptions {
  /** Globs over repository paths never copied; a glob naming a folder leaves out all of it. */
  exclude?: string[];
  /** Globs over paths git ignores that are copied all the same (exclude still wins). */
  include?: string[];
  /** The caller's own filter (the state directory inside the repository); not reported. */
  ignore?: (relPath: string) => boolean;
}

/**
 * A file, symbolic link or folder to copy, with the lstat taken when it was listed (not taken
 * again). Folders are listed where the listing walks them (.git); the folders above each entry are
 * the copy's to add.
 */
export interface ListedEntry {
  rel: string;
  st: Stats;
}

export interface CopyList {
  /** Each path once, in no particular order. */
  entries: ListedEntry[];
  skipped: SkippedPath[];
  notices: string[];
}

/** At most this many ignored paths are listed one by one; the rest are counted. */
const MAX_IGNORED_LISTED = 100;
/** Nested repositories inside nested repositories deeper than this are not copied. */
const MAX_NESTING = 8;

/**
 * What of a repository goes into the sandbox: what git would not ignore (the repository's
 * .gitignore files at every depth, .git/info/exclude, negations; not the user's global excludes),
 * the tracked files even where a .gitignore matches them, paths the `include` globs name, minus
 * `exclude`; and .git itself. Symbolic links are never followed; one leading outside the
 * repository is skipped with a notice. A directory that is not a repository is listed by git too,
 * with a private empty git directory, so both honour .gitignore the way git does.
 */
export async function listRepository(repoDir: string, opts: CopyListOptions = {}): Promise<CopyList> {
  const list: CopyList = { entries: [], skipped: [], notices: [] };
  const exclude = globTest(opts.exclude);
  const include = globTest(opts.include);
  const leftOut = new Set<string>();
  let ignoredCount = 0;
  const skip = (rel: string): boolean => {
    const hit = ancestorsAndSelf(rel).find((p) => opts.ignore?.(p) || exclude?.(p));
    if (hit === undefined) return false;
    if (!opts.ignore?.(hit) && !leftOut.has(hit)) list.skipped.push({ path: hit, reason: 'copy.exclude' });
    leftOut.add(hit);
    return true;
  };
  const add = (rel: string, st: Stats): void => {
    if (skip(rel)) return;
    if (st.isSymbolicLink()) {
      const why = linkLeaves(repoDir, rel);
      if (why !== undefined) {
        const target = safeReadlink(path.join(repoDir, rel));
        list.skipped.push({ path: rel, reason: `symbolic link outside the repository (${why})` });
        list.notices.push(`${rel} -> ${target} points outside the repository; not copied`);
        return;
      }
    } else if (!st.isFile() && !st.isDirectory()) {
      list.skipped.push({ path: rel, reason: 'not a file, folder or symbolic link' });
      list.notices.push(`${rel} is not a file, folder or symbolic link; not copied`);
      return;
    }
    list.entries.push({ rel, st });
  };

  const addTree = async (rel: string, depth: number): Promise<void> => {
    const listing = await gitListing(repoDir, rel, depth === 0, list.notices);
    for (const found of listing.paths) {
      const child = join(rel, found.replace(/\/$/, ''));
      const st = lstatSync(path.join(repoDir, child), { throwIfNoEntry: false });
      if (!st) continue; // tracked, deleted from the work tree
      if (!st.isDirectory()) add(child, st);
      else if (skip(child)) continue;
      else if (depth >= MAX_NESTING) {
        list.skipped.push({ path: child, reason: 'repository nested too deep' });
        list.notices.push(`${child} is a repository nested more than ${MAX_NESTING} deep; not copied`);
      } else await addTree(child, depth + 1); // a nested repository or submodule
    }
    const gitDir = join(rel, '.git');
    const gitSt = lstatSync(path.join(repoDir, gitDir), { throwIfNoEntry: false });
    if (gitSt) add(gitDir, gitSt);
    if (gitSt?.isDirectory()) walkAll(repoDir, gitDir, add);
    for (const found of listing.ignored) {
      const child = join(rel, found.replace(/\/$/, ''));
      if (include === undefined) {
        if (ignoredCount++ < MAX_IGNORED_LISTED) list.skipped.push({ path: child, reason: 'ignored (.gitignore)' });
        continue;
      }
      const st = lstatSync(path.join(repoDir, child), { throwIfNoEntry: false });
      if (!st) continue;
      let taken = 0;
      const take = (p: string, s: Stats): void => {
        if (!ancestorsAndSelf(p).some(include)) return;
        taken++;
        add(p, s);
      };
      if (st.isDirectory()) walkAll(repoDir, child, take);
      else take(child, st);
      if (taken === 0 && ignoredCount++ < MAX_IGNORED_LISTED)
        list.skipped.push({ path: child, reason: 'ignored (.gitignore)' });
    }
  };
  await addTree('', 0);
  if (ignoredCount > MAX_IGNORED_LISTED)
    list.skipped.push({ path: '…', reason: `and ${ignoredCount - MAX_IGNORED_LISTED} more ignored paths` });
  return list;
}

interface GitListing {
  /** Files and links to copy; `dir/` for a nested repository. */
  paths: string[];
  /** Ignored paths, a wholly ignored folder once as `dir/`. */
  ignored: string[];
}

/**
 * The repository's own index and ignore rules for the top level when it has a .git; a private
 * empty git directory otherwise (a plain folder, a nested repository, or a top level whose git
 * failed): then git reads no config of the repository's at all, and lists by .gitignore alone.
 */
async function gitListing(repoDir: string, rel: string, top: boolean, notices: string[]): Promise<GitListing> {
  const workTree = path.join(repoDir, rel);
  const own = lstatSync(path.join(workTree, '.git'), { throwIfNoEntry: false });
  if (top && own) {
    const opts = { workTree, ...(own.isDirectory() ? { gitDir: path.join(workTree, '.git') } : {}) };
    try {
      return await listWith(opts);
    } catch (e) {
      notices.push(
        `git could not list the repository (${(e as Error).message.slice(0, 200)}); ` +
          'copied what its .gitignore files allow, tracked or not',
      );
    }
  }
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-copy-'));
  try {
    const gitDir = path.join(scratch, 'git');
    await hostGit(['init', '-q', '--bare', '--template=', gitDir], { workTree, gitDir, noWorkTree: true });
    return await listWith({ workTree, gitDir });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function listWith(opts: { workTree: string; gitDir?: string }): Promise<GitListing> {
  const [paths, ignored] = await Promise.all([
    hostGit(['ls-files', '-z', '--cached', '--others', '--exclude-standard'], opts),
    hostGit(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'], opts),
  ]);
  return { paths: [...new Set(nulPaths(paths))], ignored: nulPaths(ignored) };
}

/** Every entry under `rel` (not `rel` itself), folders included, links not followed. */
function walkAll(root: string, rel: string, visit: (rel: string, st: Stats) => void): void {
  const stack = [rel];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let names: string[];
    try {
      names = readdirSync(path.join(root, dir));
    } catch {
      continue;
    }
    for (const name of names) {
      const child = join(dir, name);
      const st = lstatSync(path.join(root, child), { throwIfNoEntry: false });
      if (!st) continue;
      visit(child, st);
      if (st.isDirectory()) stack.push(child);
    }
  }
}

/** A test matching a path against any of the globs (policy glob syntax), or undefined for none. */
function globTest(globs: string[] | undefined): ((rel: string) => boolean) | undefined {
  if (!globs || globs.length === 0) return undefined;
  const res = globs.map((g) => pathPattern(g.replace(/^\.?\/+/, '').replace(/\/+$/, '')));
  return (rel) => res.some((re) => re.test(rel));
}

/** `a`, `a/b`, `a/b/c` for `a/b/c`: a glob naming a folder covers what is inside it. */
export function ancestorsAndSelf(rel: string): string[] {
  const parts = rel.split('/');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

function join(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

function safeReadlink(p: string): string {
  try {
    return readlinkSync(p);
  } catch {
    return '?';
  }
}
