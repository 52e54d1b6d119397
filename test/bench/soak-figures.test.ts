import { describe, expect, it } from 'vitest';
import { mergeResults } from '../../bench/soak/results';
import { parseEvents, runFigures, runsPerMinute, type RunEvidence, type SoakEvent } from '../../bench/soak/figures';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The soak's arithmetic on hand-made logs: what counts as a double execution and as a lost event. */
const ev = (seq: number, type: string, data: Record<string, unknown> = {}, hash = `h${seq}`): SoakEvent => ({
  seq,
  ts: `2026-11-24T00:00:${String(seq).padStart(2, '0')}Z`,
  type,
  hash,
  data,
});
const started = (seq: number, callId: string, hash?: string) => ev(seq, 'tool.execution.started', { callId }, hash);
const clean: SoakEvent[] = [
  ev(0, 'run.started'),
  started(1, 'c1'),
  ev(2, 'tool.execution.completed'),
  ev(3, 'run.completed'),
];
const run = (over: Partial<RunEvidence>): RunEvidence => ({
  runId: 'run_x',
  store: clean,
  verified: true,
  locals: [],
  completedPerQueue: true,
  ...over,
});

describe('soak figures', () => {
  it('a clean run, and local copies identical to the store, count nothing', () => {
    expect(runFigures(run({ locals: [clean, clean.slice(0, 2)] }))).toMatchObject({
      doubleExecutions: 0,
      lostEvents: 0,
    });
  });

  it('two starts of one call (in the store, or one only in a fenced local copy) are a double execution', () => {
    const twice = [...clean.slice(0, 3), started(3, 'c1'), ev(4, 'run.completed')];
    expect(runFigures(run({ store: twice })).doubleExecutions).toBe(1);
    const forked = [
      ev(0, 'run.started'),
      started(1, 'c1', 'other-hash'),
      ev(2, 'tool.execution.completed', { callId: 'c1' }, 'x'),
    ];
    expect(runFigures(run({ locals: [forked] })).doubleExecutions).toBe(1);
    // Appended, then the flush before invoking never returned: it did not run.
    const neverRan = [ev(0, 'run.started'), started(1, 'c1', 'other-hash')];
    expect(runFigures(run({ locals: [neverRan] }))).toMatchObject({
      doubleExecutions: 0,
      lostEvents: 0,
      unflushedLocal: 1, // run.started is the store's own event
    });
  });

  it('a seq gap, a missing run.completed, an unverified store behind a local copy, a local-only start: lost', () => {
    expect(runFigures(run({ store: [clean[0]!, clean[2]!, clean[3]!] })).lostEvents).toBe(1);
    expect(runFigures(run({ store: clean.slice(0, 3) })).lost).toEqual([
      'the queue says completed; the store log has no run.completed',
    ]);
    const acted = [
      ...clean.slice(0, 3),
      started(3, 'c2', 'L3'),
      ev(4, 'tool.execution.completed', { callId: 'c2' }, 'L4'),
    ];
    expect(runFigures(run({ locals: [acted] })).lost).toEqual([
      'execution of c2 ran (local seq 3) and is not in the store',
    ]);
    // The store lost the run's tail behind an acted-on start: the start, and seq 1..4 it should have had.
    const behind = run({ store: clean.slice(0, 1), verified: false, locals: [acted], completedPerQueue: false });
    expect(runFigures(behind).lostEvents).toBe(5);
  });

  it('events a killed worker wrote locally after its last flush and never acted on are not lost', () => {
    const tail = [...clean.slice(0, 3), ev(3, 'model.turn.started', {}, 'local-only')];
    expect(runFigures(run({ locals: [tail] })).lostEvents).toBe(0);
  });

  it('runs per minute; a torn last line is dropped; results are merged, not replaced', () => {
    expect(runsPerMinute(8, 0, 120_000)).toBe(4);
    expect(runsPerMinute(8, 5, 5)).toBe(0);
    expect(parseEvents(`${JSON.stringify(clean[0])}\n{"seq":1,"ty`)).toHaveLength(1);
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-soak-results-')), 'latest.json');
    writeFileSync(file, JSON.stringify({ coldStartMs: { p50: 1 }, soak: { old: true } }));
    mergeResults(file, { soak: { runsCompleted: 3 } });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ coldStartMs: { p50: 1 }, soak: { runsCompleted: 3 } });
  });
});
