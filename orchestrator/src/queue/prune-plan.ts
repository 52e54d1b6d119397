import type { OpenedRecord } from './run-record';

/** What the queue holds, as `gatehouse queue prune` found it. */
export interface PruneInput {
  now: number;
  /** Ended runs' records (and failed runs' snapshots) older than this go; younger ones stay. */
  olderThanMs: number;
  records: Array<{ runId: string; opened: OpenedRecord }>;
  snapshots: Array<{ name: string; mtime: string }>;
  /** Runs whose log in the event store ends in a `run.completed` that verifies with the key. */
  completedInStore: ReadonlySet<string>;
}

export interface PrunePlan {
  /** Object names to delete from the snapshots store, each with why. */
  snapshots: Array<{ name: string; why: string }>;
  /** Run records to purge from the runs bucket, each with why. */
  records: Array<{ runId: string; why: string }>;
  /** What stays although it may look prunable, with why (a person reads it). */
  kept: Array<{ runId: string; why: string }>;
}

const snapshotOf = (runId: string): string => `${runId}.tar`;
const ENDED = new Set(['completed', 'failed', 'rejected']);

/**
 * What to remove, decided only from verified facts:
 * - a queued, running or paused run keeps its record and its snapshot whatever their age: a paused
 *   run waiting on an approval is resumed on its snapshot, however late the answer comes;
 * - a completed run's snapshot goes at once, but only when the store's own log says the run
 *   completed (its end and its last checkpoint are in the store; nothing ever resumes it again);
 *   its record goes once older than the age;
 * - a failed or rejected run keeps both for the age (it may still be submitted again with
 *   `--resume`), then both go;
 * - a record that does not verify is never acted on (neither it nor the snapshot it names);
 * - a snapshot with no record goes once older than the age (a submit that died before writing
 *   the record); a younger one may be a submit in progress.
 */
export function planPrune(input: PruneInput): PrunePlan {
  const plan: PrunePlan = { snapshots: [], records: [], kept: [] };
  const old = (iso: string): boolean => {
    const t = Date.parse(iso);
    return Number.isFinite(t) && input.now - t >= input.olderThanMs;
  };
  const snapshotNames = new Set(input.snapshots.map((s) => s.name));
  const withRecord = new Set<string>();
  for (const { runId, opened } of input.records) {
    withRecord.add(snapshotOf(runId));
    if ('unverified' in opened) {
      plan.kept.push({ runId, why: `its record is not trusted (${opened.unverified}); check it by hand` });
      continue;
    }
    const r = opened.record;
    const snapshot = r.snapshot?.name ?? snapshotOf(runId);
    withRecord.add(snapshot);
    const hasSnapshot = snapshotNames.has(snapshot);
    if (!ENDED.has(r.state)) {
      if (old(r.updatedAt)) plan.kept.push({ runId, why: `${r.state} since ${r.updatedAt}: still live, kept` });
      continue;
    }
    if (r.state === 'completed' && !input.completedInStore.has(runId)) {
      plan.kept.push({ runId, why: "its record says completed but the store's log does not end in a verified end" });
      continue;
    }
    const expired = old(r.updatedAt);
    if (hasSnapshot && (r.state === 'completed' || expired))
      plan.snapshots.push({
        name: snapshot,
        why:
          r.state === 'completed' ? 'its run completed (its end is in the store)' : `its run ${r.state} ${r.updatedAt}`,
      });
    if (expired) plan.records.push({ runId, why: `${r.state} ${r.updatedAt}` });
  }
  for (const s of input.snapshots)
    if (!withRecord.has(s.name) && old(s.mtime)) plan.snapshots.push({ name: s.name, why: 'no run record names it' });
  return plan;
}
