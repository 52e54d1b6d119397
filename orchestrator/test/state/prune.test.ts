import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownerLabel } from '@gatehouse/shared';
import { parseAge } from '../../src/cli/runs';
import { UsageError } from '../../src/cli/usage';
import { pruneRuns } from '../../src/events/prune';
import { fakeRun, tempDir } from './fake-runs';

const NOW = Date.parse('2025-06-30T00:00:00.000Z');
const DAY = 86_400_000;
const daysAgo = (d: number): string => new Date(NOW - d * DAY).toISOString();
const done = (d: number, status = 'final') => ({ type: 'run.completed', ts: daysAgo(d), status });

function state() {
  const dir = tempDir();
  fakeRun(dir, 'run_old_final', { startedAt: daysAgo(41), last: done(40) });
  fakeRun(dir, 'run_old_failed', { startedAt: daysAgo(41), last: done(35, 'failed') });
  fakeRun(dir, 'run_recent', { startedAt: daysAgo(3), last: done(2) });
  fakeRun(dir, 'run_paused', { startedAt: daysAgo(60), last: { type: 'run.paused', ts: daysAgo(59) } });
  fakeRun(dir, 'run_cut_short', { startedAt: daysAgo(60), last: { type: 'tool.intent', ts: daysAgo(59) } });
  // A run another live process writes (this one: its lock names a live owner).
  const locked = fakeRun(dir, 'run_locked', { startedAt: daysAgo(50), last: done(50) });
  writeFileSync(path.join(locked, 'writer.lock'), ownerLabel());
  // A stale lock (its process is gone) does not keep a run.
  const stale = fakeRun(dir, 'run_stale_lock', { startedAt: daysAgo(50), last: done(50) });
  writeFileSync(path.join(stale, 'writer.lock'), `${ownerLabel().split(':')[0]}:999999999:1`);
  // A tree goes as one, dated by its last activity: here the child's, which is recent.
  fakeRun(dir, 'run_parent', { startedAt: daysAgo(45), last: done(44) });
  fakeRun(dir, 'run_child', { startedAt: daysAgo(45), parent: 'run_parent', last: done(1) });
  fakeRun(dir, 'run_parent2', { startedAt: daysAgo(45), last: done(44) });
  fakeRun(dir, 'run_child2', { startedAt: daysAgo(45), parent: 'run_parent2', last: done(44) });
  return dir;
}

const exists = (dir: string, id: string) => existsSync(path.join(dir, 'runs', id));

describe('gatehouse runs prune', () => {
  it('removes finished runs older than the age, each with its sub-agents; keeps paused, unfinished, live', () => {
    const dir = state();
    const r = pruneRuns(dir, { olderThanMs: 30 * DAY, now: NOW });
    expect(r.removed.map((x) => x.runId).sort()).toEqual([
      'run_old_failed',
      'run_old_final',
      'run_parent2',
      'run_stale_lock',
    ]);
    expect(r.removed.find((x) => x.runId === 'run_parent2')!.runs).toEqual(['run_child2', 'run_parent2']);
    expect(Object.fromEntries(r.kept.map((k) => [k.runId, k.reason]))).toEqual({
      run_paused: expect.stringMatching(/^paused, waiting for approval/) as unknown,
      run_cut_short: expect.stringMatching(/^not finished .*gatehouse resume run_cut_short/) as unknown,
      run_locked: expect.stringMatching(/^being written by a live gatehouse process/) as unknown,
    });
    expect(r.newer).toBe(2); // run_recent, and run_parent's tree (its child was active yesterday)
    expect(r.bytes).toBeGreaterThan(0);
    expect(r.bytes).toBe(r.removed.reduce((n, x) => n + x.bytes, 0));
    for (const id of ['run_old_final', 'run_old_failed', 'run_parent2', 'run_child2', 'run_stale_lock'])
      expect(exists(dir, id)).toBe(false);
    for (const id of ['run_recent', 'run_paused', 'run_cut_short', 'run_locked', 'run_parent', 'run_child'])
      expect(exists(dir, id)).toBe(true);
  });

  it('a shorter age reaches more; --dry-run removes nothing and reports the same', () => {
    const dir = state();
    const dry = pruneRuns(dir, { olderThanMs: 1.5 * DAY, now: NOW, dryRun: true });
    expect(dry.removed.map((x) => x.runId)).toContain('run_recent');
    expect(exists(dir, 'run_recent')).toBe(true);
    expect(exists(dir, 'run_old_final')).toBe(true);
    const real = pruneRuns(dir, { olderThanMs: 1.5 * DAY, now: NOW });
    expect(real.removed).toEqual(dry.removed);
    expect(exists(dir, 'run_recent')).toBe(false);
    expect(pruneRuns(dir, { olderThanMs: 1.5 * DAY, now: NOW }).removed).toEqual([]);
  });

  it.each([
    ['7d', 7 * DAY],
    ['12h', 12 * 3_600_000],
    ['30m', 30 * 60_000],
    ['0d', 0],
  ])('reads %s', (text, ms) => {
    expect(parseAge(text)).toBe(ms);
  });

  it.each(['7', 'd', '7w', '-1d', '1.5d', '7 days', ''])('refuses %j with the accepted forms', (text) => {
    expect(() => parseAge(text)).toThrow(UsageError);
    expect(() => parseAge(text)).toThrow(/e\.g\. 7d, 12h, 30m/);
  });
});
