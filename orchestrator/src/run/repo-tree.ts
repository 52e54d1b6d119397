import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { SAFE_GIT, SAFE_GIT_ENV } from '@gatehouse/shared';
import { PlainFileError, readPlainFile } from '../files/read-plain-file';

/**
 * What a repository held when a run started, so resume can tell whether it changed since.
 * - A git repository: `tree` is `HEAD^{tree}` (of the folder given, when it is a sub-folder of the
 *   repository), `dirty` whether `git status` lists anything (untracked files included, ignored ones
 *   not; `.gatehouse/` left out, where older runs kept their logs), and when dirty `changes`: a
 *   SHA-256 over that status and the content of every listed file, so two different sets of
 *   uncommitted edits on the same commit are told apart.
 * - Anything else: `hash`, a SHA-256 over every file's relative path, type and content (a link's
 *   target), `.git` and `.gatehouse` left out.
 * Past CONTENT_BUDGET bytes of content, files count by size and modification time instead: a huge
 * tree costs a stat, not a read, and a change to one of them is still seen (unless the edit kept
 * both).
 */
export type RepoTree =
  { kind: 'git'; tree: string; dirty: boolean; changes?: string } | { kind: 'files'; hash: string; files: number };

const CONTENT_BUDGET = 256 * 1024 * 1024;
const MAX_FILES = 200_000;

function git(dir: string, args: string[]): string {
  // The repository's own config cannot make this run programs (hooks, fsmonitor, pager).
  return execFileSync('git', [...SAFE_GIT, '-C', dir, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...SAFE_GIT_ENV, PATH: process.env.PATH ?? SAFE_GIT_ENV.PATH },
    stdio: ['ignore', 'pipe', 'ignore'],
    maxBuffer: 256 * 1024 * 1024,
  });
}

/** One file's contribution to a hash: its type and content, or its size and mtime once the budget is spent. */
function fileDigest(file: string, budget: { left: number }): string {
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return 'missing';
  }
  if (st.isSymbolicLink()) return `link:${readlinkSync(file)}`;
  if (!st.isFile()) return st.isDirectory() ? 'dir' : 'other';
  const x = st.mode & 0o111 ? 'x' : '-';
  if (st.size > budget.left) return `file${x}:${st.size}:${st.mtimeMs}`;
  budget.left -= st.size;
  let content: Buffer;
  try {
    // Not readFileSync: a file swapped for a FIFO after the lstat above would block it forever.
    content = readPlainFile(file, st.size);
  } catch (e) {
    if (e instanceof PlainFileError) return `changed:${e.problem}`;
    throw e;
  }
  return `file${x}:${createHash('sha256').update(content).digest('hex')}`;
}

function hashPaths(root: string, rels: readonly string[], head = ''): string {
  const h = createHash('sha256').update(head);
  const budget = { left: CONTENT_BUDGET };
  for (const rel of [...rels].sort()) h.update(`${rel}\0${fileDigest(path.join(root, rel), budget)}\0`);
  return h.digest('hex');
}

function walk(root: string): string[] {
  const out: string[] = [];
  const stack = [''];
  while (stack.length > 0 && out.length < MAX_FILES) {
    const rel = stack.pop()!;
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (rel === '' && (e.name === '.git' || e.name === '.gatehouse')) continue;
      if (e.isDirectory()) stack.push(child);
      else out.push(child);
    }
  }
  return out;
}

/** The tree of the repository at `dir`; undefined when it cannot be read at all (then nothing is compared). */
export function repoTree(dir: string): RepoTree | undefined {
  let prefix: string | undefined;
  try {
    prefix = git(dir, ['rev-parse', '--show-prefix']).trim();
  } catch {
    prefix = undefined; // not a git repository (or no git): hash the files
  }
  try {
    if (prefix !== undefined) {
      let tree: string;
      try {
        tree = git(dir, ['rev-parse', prefix ? `HEAD:${prefix}` : 'HEAD^{tree}']).trim();
      } catch {
        tree = 'unborn'; // no commit yet: everything is in the status
      }
      const status = git(dir, [
        'status',
        '--porcelain=v1',
        '-z',
        '--untracked-files=all',
        '--',
        '.',
        ':(exclude).gatehouse',
      ]);
      if (status === '') return { kind: 'git', tree, dirty: false };
      const top = git(dir, ['rev-parse', '--show-toplevel']).trim();
      // Each entry is "XY path"; a rename's entry is followed by its source path.
      const paths = status
        .split('\0')
        .filter((e) => /^.. /.test(e))
        .map((e) => e.slice(3));
      return { kind: 'git', tree, dirty: true, changes: hashPaths(top, paths, status) };
    }
    const files = walk(dir);
    return { kind: 'files', hash: hashPaths(dir, files), files: files.length };
  } catch {
    return undefined;
  }
}

/** Why the tree now differs from the recorded one, or undefined when it is the same. */
export function treeChange(recorded: RepoTree, now: RepoTree | undefined): string | undefined {
  if (!now) return 'the repository cannot be read now';
  if (recorded.kind !== now.kind)
    return recorded.kind === 'git' ? 'it is no longer a git repository' : 'it has become a git repository';
  if (recorded.kind === 'files' && now.kind === 'files')
    return recorded.hash === now.hash ? undefined : `its files changed (${recorded.files} then, ${now.files} now)`;
  if (recorded.kind === 'git' && now.kind === 'git') {
    if (recorded.tree !== now.tree) return `its committed tree changed (${short(recorded.tree)} → ${short(now.tree)})`;
    if (recorded.dirty !== now.dirty)
      return recorded.dirty ? 'its uncommitted changes are gone' : 'it has uncommitted changes now';
    if (recorded.changes !== now.changes) return 'its uncommitted changes are different';
  }
  return undefined;
}

const short = (h: string): string => h.slice(0, 12);
