import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import path from 'node:path';
import type { ListEntry } from '@gatehouse/shared';

export interface WalkOptions {
  recursive: boolean;
  /** Directory names not descended into (still listed). */
  skipDirs: ReadonlySet<string>;
  deadline: number;
  signal: AbortSignal;
}

/**
 * Each directory is read synchronously (a thread-pool hop per entry would dominate the cost), and
 * the walk yields to the event loop between directories so heartbeats and cancels get through.
 *
 * Breadth-first listing that never follows symbolic links (they are reported as such) and stops
 * at the caller's deadline or on cancel. Yields entries with paths relative to `root`.
 */
export async function* walk(root: string, start: string, opts: WalkOptions): AsyncGenerator<ListEntry> {
  const queue = [start];
  while (queue.length > 0) {
    if (opts.signal.aborted || Date.now() > opts.deadline) return;
    const dir = queue.shift()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // unreadable or vanished directory: skip it, do not fail the listing
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const abs = path.join(dir, entry.name);
      const rel = path.relative(root, abs);
      const type = entry.isSymbolicLink() ? 'symlink' : entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : 'other';
      let size = 0;
      if (type === 'file') size = sizeOf(abs);
      yield { path: rel, type, size };
      if (type === 'dir' && opts.recursive && !opts.skipDirs.has(entry.name)) queue.push(abs);
    }
    await yieldToLoop();
  }
}

function sizeOf(file: string): number {
  try {
    return lstatSync(file).size;
  } catch {
    return 0; // vanished since the listing
  }
}
