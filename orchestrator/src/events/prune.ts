import { lstatSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { acquireWriterLock, RunLockedError, writerLockHolder } from './lock';
import { EVENTS_FILE, runDir } from './paths';
import { listRuns, type RunSummary } from './runs';

export interface PruneOptions {
  /** Runs whose last event is older than this many milliseconds are removed (when finished). */
  olderThanMs: number;
  /** Only say what would be removed. */
  dryRun?: boolean;
  now?: number;
}

export interface PrunedRun {
  /** The top-level run; `runs` also holds its sub-agents, which go with it. */
  runId: string;
  runs: string[];
  status: string;
  /** When its tree last wrote an event. */
  lastAt: string;
  bytes: number;
}

export interface KeptRun {
  runId: string;
  reason: string;
}

export interface PruneReport {
  stateDir: string;
  removed: PrunedRun[];
  kept: KeptRun[];
  /** Top-level runs not old enough to be considered. */
  newer: number;
  bytes: number;
}

function sizeOf(p: string): number {
  const st = lstatSync(p);
  if (!st.isDirectory()) return st.size;
  return readdirSync(p).reduce((n, name) => n + sizeOf(path.join(p, name)), 0);
}

/** Runs grouped under their top-level run (a sub-agent is kept or removed with the run that started it). */
function trees(runs: readonly RunSummary[]): Map<string, RunSummary[]> {
  const byId = new Map(runs.map((r) => [r.runId, r]));
  const out = new Map<string, RunSummary[]>();
  for (const r of runs) {
    let root = r;
    for (let i = 0; i < 64 && root.parentRunId !== null && byId.has(root.parentRunId); i++)
      root = byId.get(root.parentRunId)!;
    out.set(root.runId, [...(out.get(root.runId) ?? []), r]);
  }
  return out;
}

function lastActivity(stateDir: string, r: RunSummary): number {
  const t = Date.parse(r.lastTs ?? r.startedAt ?? '');
  if (Number.isFinite(t)) return t;
  try {
    return statSync(path.join(runDir(stateDir, r.runId), EVENTS_FILE)).mtimeMs;
  } catch {
    return 0;
  }
}

/** Why a finished-looking tree must stay, or undefined when it may go. */
function keepReason(stateDir: string, root: RunSummary, tree: readonly RunSummary[]): string | undefined {
  for (const r of tree) {
    const owner = writerLockHolder(runDir(stateDir, r.runId));
    if (owner) return `being written by a live gatehouse process (${owner})`;
  }
  if (root.status === 'paused')
    return `paused, waiting for approval: answer it (gatehouse approvals ${root.runId}) and resume it, or deny it`;
  if (root.status === null)
    return `not finished (interrupted, or never started): gatehouse resume ${root.runId} continues it`;
  return undefined;
}

/**
 * Removes the finished runs of one state directory (a repository's group, or an explicit one)
 * whose last event is older than `olderThanMs`, each with its sub-agents. Never a paused run, an
 * unfinished one (resume can continue it) or one whose writer lock a live process holds: each
 * tree's locks are taken before anything of it is removed, so a run resumed meanwhile stays.
 */
export function pruneRuns(stateDir: string, o: PruneOptions): PruneReport {
  const now = o.now ?? Date.now();
  const report: PruneReport = { stateDir, removed: [], kept: [], newer: 0, bytes: 0 };
  for (const [rootId, tree] of trees(listRuns(stateDir))) {
    const root = tree.find((r) => r.runId === rootId)!;
    const last = Math.max(...tree.map((r) => lastActivity(stateDir, r)));
    if (now - last < o.olderThanMs) {
      report.newer++;
      continue;
    }
    const reason = keepReason(stateDir, root, tree);
    if (reason) {
      report.kept.push({ runId: rootId, reason });
      continue;
    }
    const dirs = tree.map((r) => runDir(stateDir, r.runId));
    const bytes = dirs.reduce((n, d) => n + sizeOf(d), 0);
    const entry = {
      runId: rootId,
      runs: tree.map((r) => r.runId),
      status: root.status ?? '?',
      lastAt: new Date(last).toISOString(),
      bytes,
    };
    if (!o.dryRun) {
      const unlocks: Array<() => void> = [];
      try {
        for (const r of tree) unlocks.push(acquireWriterLock(runDir(stateDir, r.runId), r.runId));
      } catch (e) {
        for (const u of unlocks) u();
        if (!(e instanceof RunLockedError)) throw e;
        report.kept.push({ runId: rootId, reason: `being written by a live gatehouse process (${e.owner})` });
        continue;
      }
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
    report.removed.push(entry);
    report.bytes += bytes;
  }
  return report;
}
