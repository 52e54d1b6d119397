import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** More links than this on one path is a loop, as for the kernel (ELOOP). */
const MAX_HOPS = 40;

/**
 * Whether the symbolic link at `rel` (relative to `root`) resolves to a place outside the
 * repository: an absolute target, `..` climbing above the root, or a chain of links that does,
 * even when each link on its own looks harmless (`a -> q/q/b/../..` where `q/q/b -> ../..`). The
 * path is resolved one component at a time the way the kernel would, following the links found
 * on the host; a component that does not exist is taken as written (it cannot be a link). Returns
 * the reason it leaves, or undefined when it stays inside (dangling links inside included).
 */
export function linkLeaves(root: string, rel: string): string | undefined {
  let target: string;
  try {
    target = readlinkSync(path.join(root, rel));
  } catch {
    return 'it cannot be read';
  }
  if (path.isAbsolute(target)) return 'it is an absolute path';
  const parts = rel.split('/').slice(0, -1);
  let pending = target.split('/');
  let hops = 1;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return 'it climbs above the repository';
      parts.pop();
      continue;
    }
    parts.push(part);
    const here = path.join(root, ...parts);
    const st = lstatSync(here, { throwIfNoEntry: false });
    if (!st?.isSymbolicLink()) continue;
    if (++hops > MAX_HOPS) return 'it is a loop of links';
    let next: string;
    try {
      next = readlinkSync(here);
    } catch {
      return 'a link on its way cannot be read';
    }
    if (path.isAbsolute(next)) return `it goes through ${parts.join('/')}, which points to an absolute path`;
    parts.pop();
    pending = [...next.split('/'), ...pending];
  }
  return undefined;
}
