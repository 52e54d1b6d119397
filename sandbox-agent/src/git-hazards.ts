import { readdirSync, unlinkSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { asCommandUser } from './as-user';
import { log } from './log';
import type { CommandUser } from './users';

/** Files git opens, with a blocking open(), in every directory it walks. */
const READ_BY_GIT = new Set(['.gitignore', '.gitattributes']);

/**
 * A command can make `.gitignore` a FIFO (red-team finding): git's blocking open() of it then hangs
 * every git that walks the workspace until its timeout. A FIFO holds no content, so before the
 * daemon's own git walks the tree, every FIFO git would open is removed (as the command user, whose
 * file it is). Bounded by `maxEntries`; .git directories are not entered. Returns what was removed.
 */
export function removeGitFifos(root: string, user: CommandUser, maxEntries = 2_000_000): string[] {
  const removed: string[] = [];
  const stack = [''];
  let seen = 0;
  while (stack.length > 0 && seen < maxEntries) {
    const rel = stack.pop() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(path.join(root, rel), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      seen++;
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== '.git') stack.push(child);
      } else if (e.isFIFO() && READ_BY_GIT.has(e.name)) {
        try {
          asCommandUser(user, () => unlinkSync(path.join(root, child)));
          removed.push(child);
        } catch (err) {
          log('warn', 'could not remove a FIFO git would block on', { path: child, err: String(err) });
        }
      }
    }
  }
  if (removed.length > 0) log('warn', 'removed FIFOs git would block on', { removed });
  return removed;
}
