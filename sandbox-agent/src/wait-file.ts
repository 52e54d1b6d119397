import { promises as fs, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';

/**
 * Waits until `file` holds content `parse` accepts (it throws on a partial write), and returns that.
 * A pooled daemon may wait for hours, so it sleeps on inotify rather than polling hard; the slow
 * poll beside it covers a file system whose events do not reach the watch.
 */
export async function waitForFile<T>(file: string, parse: (text: string) => T, waitMs: number): Promise<T> {
  const deadline = Date.now() + waitMs;
  let wake: (() => void) | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(path.dirname(file), () => wake?.());
  } catch {
    watcher = undefined; // no watch: the poll alone
  }
  try {
    for (;;) {
      const text = await fs.readFile(file, 'utf8').catch(() => undefined);
      if (text !== undefined) {
        try {
          return parse(text);
        } catch {
          // still being written
        }
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`nothing complete at ${file} after ${waitMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, watcher ? 250 : 10));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    watcher?.close();
  }
}
