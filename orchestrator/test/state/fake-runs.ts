import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

const dirs: string[] = [];

/** A fresh directory, removed after the test. */
export function tempDir(prefix = 'gh-state-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * A run folder as listings read it: the first and last lines of events.jsonl (listing, resolving
 * and pruning read no more; verify is not involved).
 */
export function fakeRun(
  stateDir: string,
  runId: string,
  o: { startedAt: string; parent?: string; last?: { type: string; ts: string; status?: string } },
): string {
  const dir = path.join(stateDir, 'runs', runId);
  mkdirSync(dir, { recursive: true });
  const line = (type: string, ts: string, data: unknown) =>
    JSON.stringify({ id: `${runId}-${type}`, runId, ts, type, parentRunId: o.parent ?? null, data });
  const lines = [line('run.started', o.startedAt, { task: 't', mode: 'auto', surface: [] })];
  if (o.last) lines.push(line(o.last.type, o.last.ts, o.last.status ? { status: o.last.status } : {}));
  writeFileSync(path.join(dir, 'events.jsonl'), `${lines.join('\n')}\n`);
  return dir;
}
