import { chmodSync, chownSync, lchownSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/** What the orchestrator lists in the protect file (orchestrator/src/sandbox/copy-in.ts). */
export const ProtectList = z.strictObject({
  entries: z.array(z.string().max(4096)).max(1_000_000),
  dirs: z.array(z.string().max(4096)).max(1_000_000),
  /** The repository's .git was not copied: start a fresh one (fresh-repository.ts). */
  freshRepository: z.boolean().optional(),
});
export type ProtectList = z.infer<typeof ProtectList>;

/**
 * Makes the paths the policy denies writing unwritable by the command user, before any command
 * runs. The copy already gave them to root without group/other write bits; what remains is their
 * directories: a directory under which everything is denied stays root's with mode 0755 (nothing
 * can be created in it), and every other directory on the way to a protected path becomes root's
 * with mode 1777 — anyone may still create files in it, but the sticky bit stops the command user
 * from deleting or renaming what it does not own (the protected file, or a protected directory
 * holding one), which is how a path would otherwise be swapped for one of its own.
 */
export function applyProtection(root: string, list: ProtectList): { locked: number; sticky: number } {
  const whole = new Set(list.dirs);
  const ancestors = new Set<string>();
  let locked = 0;
  for (const rel of [...list.dirs, ...list.entries]) {
    const full = inside(root, rel);
    if (!full || !plainPath(root, rel)) continue;
    const st = lstatSync(full, { throwIfNoEntry: false });
    if (!st) continue;
    lchownSync(full, 0, 0);
    if (!st.isSymbolicLink()) chmodSync(full, st.mode & 0o7755);
    locked++;
    for (let dir = path.posix.dirname(rel); ; dir = path.posix.dirname(dir)) {
      if (!whole.has(dir)) ancestors.add(dir);
      if (dir === '.') break;
    }
  }
  let sticky = 0;
  for (const rel of ancestors) {
    const full = inside(root, rel);
    if (!full || !plainPath(root, rel)) continue;
    const st = lstatSync(full, { throwIfNoEntry: false });
    if (!st?.isDirectory()) continue;
    chownSync(full, 0, 0);
    chmodSync(full, 0o1777);
    sticky++;
  }
  return { locked, sticky };
}

function inside(root: string, rel: string): string | undefined {
  const full = path.resolve(root, rel);
  return full === root || full.startsWith(`${root}/`) ? full : undefined;
}

/** No symbolic link on the way: the copy packs links as links, so a listed path never needs one. */
function plainPath(root: string, rel: string): boolean {
  if (rel === '.') return true;
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const st = lstatSync(path.join(root, ...parts.slice(0, i)), { throwIfNoEntry: false });
    if (!st || st.isSymbolicLink()) return false;
  }
  return true;
}
