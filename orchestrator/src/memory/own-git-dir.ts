import { lstatSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { PlainFileError, readPlainFile } from '../files/read-plain-file';

/** A `.git` file, or a worktree's `gitdir` back-pointer, is one line of a path. */
const POINTER_MAX = 4096;

/**
 * The git directory a repository's identity may be read from, or undefined when it has none of its
 * own (repository-identity.ts then uses the path). Git follows a `.git` FILE (`gitdir: PATH`)
 * anywhere, so a hostile repository could name another repository's git directory and be taken for
 * it, reading that repository's memories without knowing anything of it. So:
 * - a `.git` folder is the repository's own, unless it is a link, or holds a `commondir` (which
 *   would take the refs and config from elsewhere);
 * - a `.git` file is followed only to a linked worktree of a repository (`git worktree add`): the
 *   folder it names has a `commondir`, and its `gitdir` back-pointer names this `.git` file;
 * - anything else (a link, a FIFO, a submodule's `.git` file, a pointer that does not point back)
 *   is not followed.
 */
export function ownGitDir(repoReal: string): string | undefined {
  const dotGit = path.join(repoReal, '.git');
  const st = lstatSync(dotGit, { throwIfNoEntry: false });
  if (!st) return undefined;
  if (st.isDirectory()) return hasFile(path.join(dotGit, 'commondir')) ? undefined : dotGit;
  if (!st.isFile()) return undefined;
  const pointer = /^gitdir: (.+)$/m.exec(readPointer(dotGit) ?? '')?.[1]?.trim();
  if (!pointer) return undefined;
  const target = realOrUndefined(path.resolve(repoReal, pointer));
  if (target === undefined || !hasFile(path.join(target, 'commondir'))) return undefined;
  const back = readPointer(path.join(target, 'gitdir'))?.trim();
  if (!back) return undefined;
  return realOrUndefined(path.resolve(target, back)) === realOrUndefined(dotGit) ? target : undefined;
}

function readPointer(file: string): string | undefined {
  try {
    return readPlainFile(file, POINTER_MAX).toString('utf8');
  } catch (e) {
    if (e instanceof PlainFileError) return undefined;
    throw e;
  }
}

function hasFile(p: string): boolean {
  return lstatSync(p, { throwIfNoEntry: false })?.isFile() === true;
}

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}
