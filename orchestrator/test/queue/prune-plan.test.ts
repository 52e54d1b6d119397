import { describe, expect, it } from 'vitest';
import { planPrune, type PruneInput } from '../../src/queue/prune-plan';
import type { RunRecord } from '../../src/queue/run-record';

const DAY = 86_400_000;
const now = Date.parse('2026-12-01T00:00:00.000Z');
const ago = (days: number): string => new Date(now - days * DAY).toISOString();

function rec(runId: string, state: RunRecord['state'], daysAgo: number): PruneInput['records'][number] {
  const record: RunRecord = {
    runId,
    state,
    task: 't',
    snapshot: { name: `${runId}.tar`, sha256: 'a'.repeat(64), bytes: 1 },
    attempts: 0,
    submittedAt: ago(daysAgo + 1),
    updatedAt: ago(daysAgo),
  };
  return { runId, opened: { record } };
}

function input(records: PruneInput['records'], completed: string[] = [], extra: PruneInput['snapshots'] = []) {
  return {
    now,
    olderThanMs: 7 * DAY,
    records,
    snapshots: [...records.map((r) => ({ name: `${r.runId}.tar`, mtime: ago(30) })), ...extra],
    completedInStore: new Set(completed),
  };
}

describe('the queue retention plan', () => {
  it('keeps every live run, record and snapshot, however old: queued, running, paused on an approval', () => {
    const plan = planPrune(
      input([rec('run_q', 'queued', 90), rec('run_r', 'running', 90), rec('run_p', 'paused', 90)]),
    );
    expect(plan.snapshots).toEqual([]);
    expect(plan.records).toEqual([]);
    expect(plan.kept.map((k) => k.runId)).toEqual(['run_q', 'run_r', 'run_p']);
  });

  it("removes a completed run's snapshot at once when the store says it completed; its record after the age", () => {
    const plan = planPrune(
      input([rec('run_new', 'completed', 1), rec('run_old', 'completed', 8)], ['run_new', 'run_old']),
    );
    expect(plan.snapshots.map((s) => s.name)).toEqual(['run_new.tar', 'run_old.tar']);
    expect(plan.records.map((r) => r.runId)).toEqual(['run_old']);
  });

  it("keeps a completed record's snapshot when the store's log does not end in a verified completion", () => {
    const plan = planPrune(input([rec('run_c', 'completed', 30)]));
    expect(plan.snapshots).toEqual([]);
    expect(plan.records).toEqual([]);
    expect(plan.kept).toEqual([{ runId: 'run_c', why: expect.stringMatching(/store's log/) as unknown }]);
  });

  it('keeps a failed run for the age (it may be submitted again), then removes record and snapshot', () => {
    const plan = planPrune(
      input([rec('run_f1', 'failed', 2), rec('run_f2', 'failed', 9), rec('run_x', 'rejected', 9)]),
    );
    expect(plan.snapshots.map((s) => s.name)).toEqual(['run_f2.tar', 'run_x.tar']);
    expect(plan.records.map((r) => r.runId)).toEqual(['run_f2', 'run_x']);
  });

  it('never acts on a record that does not verify, nor on the snapshot of its run', () => {
    const forged = { runId: 'run_z', opened: { unverified: 'its MAC does not verify' } };
    const plan = planPrune(input([forged], ['run_z']));
    expect(plan.snapshots).toEqual([]);
    expect(plan.records).toEqual([]);
    expect(plan.kept).toEqual([{ runId: 'run_z', why: expect.stringMatching(/not trusted/) as unknown }]);
  });

  it('removes a snapshot no record names once older than the age; a younger one may be a submit in progress', () => {
    const plan = planPrune(
      input(
        [],
        [],
        [
          { name: 'run_orphan.tar', mtime: ago(8) },
          { name: 'run_young.tar', mtime: ago(0) },
        ],
      ),
    );
    expect(plan.snapshots.map((s) => s.name)).toEqual(['run_orphan.tar']);
  });

  it('with an age of zero still keeps a paused run and its snapshot', () => {
    const plan = planPrune({
      ...input([rec('run_p', 'paused', 0), rec('run_c', 'completed', 0)], ['run_c']),
      olderThanMs: 0,
    });
    expect(plan.snapshots.map((s) => s.name)).toEqual(['run_c.tar']);
    expect(plan.records.map((r) => r.runId)).toEqual(['run_c']);
  });
});
