import { promises as fs } from 'node:fs';
import path from 'node:path';

type Snapshot = Map<string, string>;
const MAX_FILES = 50_000;

/**
 * size, mtime, ctime, inode and mode of every workspace file outside .git: enough to tell what a
 * command touched. The ctime is what a command cannot forge: a same-size write into the same inode
 * with its mtime put back (`touch -r`) changed nothing else here, and an earlier run of the check
 * went on counting after it (red-team finding, issue 13). Any write, chmod or touch sets the ctime.
 */
export async function snapshot(root: string): Promise<Snapshot> {
  const out: Snapshot = new Map();
  const queue = [root];
  while (queue.length > 0 && out.size < MAX_FILES) {
    const dir = queue.shift()!;
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== '.git') queue.push(abs);
        continue;
      }
      const st = await fs.lstat(abs).catch(() => undefined);
      if (st) out.set(path.relative(root, abs), `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}:${st.mode}`);
    }
  }
  return out;
}

export function diffSnapshots(before: Snapshot, after: Snapshot): string[] {
  const changed = new Set<string>();
  for (const [p, sig] of after) if (before.get(p) !== sig) changed.add(p);
  for (const p of before.keys()) if (!after.has(p)) changed.add(p);
  return [...changed].sort();
}
