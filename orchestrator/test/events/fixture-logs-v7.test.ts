import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventData, type EventEnvelope } from '@gatehouse/shared';
import { RunLog } from '../../src/events/index';
import { fixtureFolder } from './fixture-folder';
import { MemoryStore } from '../../src/memory/memory-store';
import { recordSha256 } from '../../src/memory/memory-record';
import { replayRun } from '../../src/replay/replay-run';

/**
 * What schema version 7 added, as the v7 fixture's memory runs hold it (test/fixtures/logs/generate.mjs):
 * a real `gatehouse run --memory` that read package.json and stored a record with `remember` (its policy
 * allows it), and the next run of the same repository, which recalled it. fixture-logs.test.ts runs the
 * older checks (verify, show, the fold) over every v7 run.
 */
const { runs, copy } = fixtureFolder(7);
const of = <T extends EventEnvelope['type']>(events: EventEnvelope[], type: T) =>
  events.filter((e) => e.type === type) as Extract<EventEnvelope, { type: T }>[];

describe('fixture logs v7: memory across runs', () => {
  it('the first run stored a record its observation supports; the store holds it, its MAC verifying', () => {
    const { state, key } = copy();
    const events = RunLog.readEvents(state, runs.memoryStored!.runId);
    for (const line of readFileSync(path.join(state, 'runs', runs.memoryStored!.runId, 'events.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')) {
      const e = JSON.parse(line) as { type: keyof typeof EventData; data: unknown; schemaVersion: number };
      expect(e.schemaVersion).toBe(7);
      expect(EventData[e.type].safeParse(e.data).success).toBe(true);
    }
    const [stored] = of(events, 'memory.stored');
    expect(stored?.data.record).toMatchObject({ scope: 'repository', observationIds: ['obs-1'] });
    const store = new MemoryStore(path.join(state, 'memory'), key);
    const { records, refused } = store.read();
    expect(refused).toEqual([]);
    expect(records).toHaveLength(1);
    expect(recordSha256(records[0]!)).toBe(stored!.data.record.sha256);
    expect(records[0]!.source).toMatchObject({ runId: runs.memoryStored!.runId, observationIds: ['obs-1'] });
    const obs = of(events, 'tool.observation').find((e) => e.data.observationId === 'obs-1');
    expect(obs?.data.content).toContain(records[0]!.source.citations[0]!.quote);
  });

  it('the next run recalled it into its context, on record in memory.recalled', () => {
    const { state } = copy();
    const events = RunLog.readEvents(state, runs.memoryRecalled!.runId);
    const [recalled] = of(events, 'memory.recalled');
    expect(events[1]?.type).toBe('memory.recalled');
    const stored = of(RunLog.readEvents(state, runs.memoryStored!.runId), 'memory.stored')[0]!;
    expect(recalled?.data.records.map((r) => r.id)).toEqual([stored.data.record.id]);
    expect(recalled?.data.repository).toBe(stored.data.repository);
    expect(recalled?.data.content).toContain('The test command is node --test');
  });

  it('a trace made today of the recalling run rebuilds the same context, memory included', async () => {
    const { state, key } = copy();
    const r = await replayRun(runs.memoryRecalled!.runId, { mode: 'trace', stateDir: state, key });
    expect({ verdict: r.outcome.verdict, differed: r.outcome.differed }).toEqual({ verdict: 'match', differed: 0 });
    expect(r.outcome.compared).toBeGreaterThan(0);
  });
});
