import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Merges sections into bench/results/latest.json: read, replace these keys, write by rename. The
 * other sections stay as they are: the full bench (run.ts) and the soak each write theirs beside the other's.
 */
export function mergeResults(file: string, sections: Record<string, unknown>): Record<string, unknown> {
  let current: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) current = parsed as Record<string, unknown>;
    } catch {
      // A torn or hand-edited file: its sections cannot be kept, the new ones are still written.
    }
  }
  const next = { ...current, ...sections };
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(next, null, 2)}\n`);
  renameSync(temp, file);
  return next;
}
