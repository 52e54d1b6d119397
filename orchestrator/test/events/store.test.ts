import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, EventEnvelope, GENESIS_HASH, type EventType } from '@gatehouse/shared';
import {
  EventDataError,
  eventHash,
  listRuns,
  resolveStateDir,
  RunLog,
  sealEvent,
  verifyLog,
} from '../../src/events/index';
import { appendSample, sampleEvent, tempStateDir, writeRun } from './helpers';

describe('hashing', () => {
  it('sealEvent hashes exactly canonicalJson(all fields but hash) and writes the canonical envelope', () => {
    for (let i = 0; i < 12; i++) {
      const e = sampleEvent(i);
      const unsealed = {
        id: `evt-r-${i}`,
        runId: 'r',
        seq: i,
        ts: '2025-01-01T00:00:00.000Z',
        type: e.type,
        actor: e.actor,
        causationId: i % 2 ? `evt-r-${i - 1}` : null,
        parentRunId: i % 3 ? null : 'p',
        data: e.data,
        prevHash: GENESIS_HASH,
      };
      const { hash, line } = sealEvent(unsealed);
      expect(hash).toBe(eventHash(unsealed));
      expect(line).toBe(canonicalJson({ ...unsealed, hash }));
      expect(EventEnvelope.parse(JSON.parse(line))).toEqual({ ...unsealed, hash });
    }
  });
});

describe('RunLog', () => {
  it('fills id, seq, ts, prevHash and hash, and chains events', () => {
    const state = tempStateDir();
    const log = RunLog.create(state, 'run_1');
    const a = log.append(
      'run.started',
      'runtime',
      { task: 't', mode: 'auto', surface: [] },
      { ts: new Date('2025-02-03T04:05:06.789Z') },
    );
    const b = log.append('sandbox.lost', 'sandbox', { sandboxId: 'sb_1', reason: 'gone' }, { causationId: a.id });
    expect(a).toMatchObject({
      id: 'evt-run_1-0',
      runId: 'run_1',
      seq: 0,
      ts: '2025-02-03T04:05:06.789Z',
      actor: 'runtime',
      causationId: null,
      parentRunId: null,
      prevHash: GENESIS_HASH,
    });
    expect(b).toMatchObject({ id: 'evt-run_1-1', seq: 1, causationId: a.id, prevHash: a.hash });
    expect(b.hash).toBe(eventHash(b));
    expect(log.events()).toEqual([a, b]);
    expect(Object.isFrozen(a)).toBe(true);
    expect(log.lastHash).toBe(b.hash);
    log.close();
    const lines = readFileSync(path.join(state, 'runs', 'run_1', 'events.jsonl'), 'utf8').split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(JSON.parse(lines[1]!)).toEqual(b);
  });

  it('throws a clear error on data that breaks its schema, and writes nothing', () => {
    const state = tempStateDir();
    const log = RunLog.create(state, 'r');
    // @ts-expect-error wrong data on purpose
    expect(() => log.append('run.completed', 'runtime', { status: 'done', stopReason: 'x' })).toThrow(
      /invalid data for run.completed \(a bug in the code appending it\): status: Invalid option/,
    );
    // @ts-expect-error unknown key on purpose
    expect(() => log.append('sandbox.lost', 'sandbox', { sandboxId: 'sb', reason: 'r', extra: 1 })).toThrow(
      EventDataError,
    );
    // @ts-expect-error unknown event type on purpose
    expect(() => log.append('tool.teleported', 'model', {})).toThrow(
      /unknown event type "tool.teleported": every event type needs a data schema/,
    );
    expect(() => log.append('toString' as EventType, 'model', {} as never)).toThrow(/unknown event type "toString"/);
    // @ts-expect-error bad actor on purpose
    expect(() => log.append('sandbox.lost', 'wizard', { sandboxId: 'sb', reason: 'r' })).toThrow(
      /invalid actor "wizard"/,
    );
    expect(() =>
      log.append('sandbox.lost', 'sandbox', { sandboxId: 'sb', reason: 'r' }, { causationId: 'x'.repeat(129) }),
    ).toThrow(/invalid causationId/);
    expect(log.events()).toHaveLength(0);
    log.close();
    expect(readFileSync(log.file, 'utf8')).toBe('');
  });

  it('refuses to create a run twice and to use unsafe run ids', () => {
    const state = tempStateDir();
    RunLog.create(state, 'r').close();
    expect(() => RunLog.create(state, 'r')).toThrow(/run r already exists at .*runs\/r/);
    for (const bad of ['../escape', 'a/b', '', '.', 'x'.repeat(65)]) {
      expect(() => RunLog.create(state, bad)).toThrow(/invalid run id/);
      expect(() => RunLog.open(state, bad)).toThrow(/invalid run id/);
    }
    expect(() => RunLog.open(state, 'nope')).toThrow(/run nope not found/);
  });

  it('resumes: open continues the chain where it stopped', () => {
    const state = tempStateDir();
    writeRun(state, 'r', 5, { parentRunId: 'parent_1' });
    const { log, recovered } = RunLog.open(state, 'r');
    expect(recovered).toBeUndefined();
    expect(log.parentRunId).toBe('parent_1');
    expect(log.events()).toHaveLength(5);
    appendSample(log, 5);
    expect(log.events()[5]).toMatchObject({ seq: 5, parentRunId: 'parent_1', prevHash: log.events()[4]!.hash });
    log.close();
    expect(() => log.append('sandbox.lost', 'sandbox', { sandboxId: 'sb', reason: 'r' })).toThrow(/closed/);
    expect(verifyLog(log.file)).toMatchObject({ ok: true, events: 6 });
    expect(RunLog.readEvents(state, 'r')).toHaveLength(6);
    expect(() => RunLog.open(state, 'r', { parentRunId: 'someone_else' })).toThrow(/has parent parent_1/);
  });

  it('opens an empty log (created, nothing appended yet)', () => {
    const state = tempStateDir();
    RunLog.create(state, 'r').close();
    const { log } = RunLog.open(state, 'r');
    appendSample(log, 0);
    expect(log.events()[0]!.prevHash).toBe(GENESIS_HASH);
    log.close();
    expect(verifyLog(log.file).ok).toBe(true);
  });

  it('refuses a log whose middle line is garbage, naming the line', () => {
    const state = tempStateDir();
    writeRun(state, 'r', 3);
    const file = path.join(state, 'runs', 'r', 'events.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[1] = lines[1]!.slice(0, 40);
    writeFileSync(file, lines.join('\n'));
    expect(() => RunLog.open(state, 'r')).toThrow(
      /corrupt at line 2: line is not valid JSON.*Run `gatehouse verify r`/,
    );
    expect(() => RunLog.readEvents(state, 'r')).toThrow(/corrupt at line 2/);
  });

  it('a valid-JSON last line that is not an event is tampering, not a torn write', () => {
    const state = tempStateDir();
    writeRun(state, 'r', 3);
    appendFileSync(path.join(state, 'runs', 'r', 'events.jsonl'), '{"hello":"world"}\n');
    expect(() => RunLog.open(state, 'r')).toThrow(/line 4: not a valid event envelope/);
  });

  it('fsyncEachAppend and sync() keep the same log format', () => {
    const state = tempStateDir();
    const log = RunLog.create(state, 'r', { fsyncEachAppend: true });
    for (let i = 0; i < 5; i++) appendSample(log, i);
    log.artifacts.put('some output');
    log.sync();
    log.sync();
    log.close();
    log.close(); // idempotent
    expect(verifyLog(log.file)).toMatchObject({ ok: true, events: 5 });
  });

  it('lists runs with their first timestamp and last event', () => {
    const state = tempStateDir();
    expect(listRuns(state)).toEqual([]);
    const a = RunLog.create(state, 'a_run');
    a.append(
      'run.started',
      'runtime',
      { task: 't', mode: 'auto', surface: [] },
      { ts: new Date('2025-01-02T00:00:00Z') },
    );
    a.append(
      'run.completed',
      'runtime',
      { status: 'partial', stopReason: 'budget' },
      { ts: new Date('2025-01-02T00:01:00Z') },
    );
    a.close();
    const b = RunLog.create(state, 'b_run', { parentRunId: 'a_run' });
    b.append(
      'run.started',
      'runtime',
      { task: 'sub', mode: 'auto', surface: [] },
      { ts: new Date('2025-01-01T00:00:00Z') },
    );
    b.artifacts.put('x'.repeat(200_000));
    b.append('tool.observation', 'runtime', {
      callId: 'c',
      observationId: 'obs-1',
      tool: 'bash',
      outcome: 'ok',
      content: 'y'.repeat(150_000),
      truncated: false,
    });
    b.close();
    appendFileSync(b.file, '{"torn":'); // a torn tail does not hide the last complete event
    RunLog.create(state, 'c_empty').close();
    mkdirSync(path.join(state, 'runs', 'not a run'));
    expect(listRuns(state)).toEqual([
      {
        runId: 'b_run',
        startedAt: '2025-01-01T00:00:00.000Z',
        parentRunId: 'a_run',
        lastType: 'tool.observation',
        lastTs: expect.any(String) as unknown,
        status: null,
      },
      {
        runId: 'a_run',
        startedAt: '2025-01-02T00:00:00.000Z',
        parentRunId: null,
        lastType: 'run.completed',
        lastTs: '2025-01-02T00:01:00.000Z',
        status: 'partial',
      },
      { runId: 'c_empty', startedAt: null, parentRunId: null, lastType: null, lastTs: null, status: null },
    ]);
  });

  // The default used to be `.gatehouse` in the working directory; runs now live in the user's state
  // directory, one group per repository (state-home.test.ts covers the groups).
  it("resolves the state dir from the flag, then GATEHOUSE_STATE_DIR, then the user's state directory", () => {
    expect(resolveStateDir('x', { GATEHOUSE_STATE_DIR: '/env' }, '/cwd')).toBe('/cwd/x');
    expect(resolveStateDir(undefined, { GATEHOUSE_STATE_DIR: '/env' }, '/cwd')).toBe('/env');
    expect(resolveStateDir(undefined, { HOME: '/nonexistent-home' }, '/cwd')).toMatch(
      /^\/nonexistent-home\/\.local\/state\/gatehouse\/repos\/cwd-[0-9a-f]{12}$/,
    );
    expect(resolveStateDir(undefined, { XDG_STATE_HOME: '/xdg', HOME: '/h' }, '/cwd')).toMatch(
      /^\/xdg\/gatehouse\/repos\/cwd-[0-9a-f]{12}$/,
    );
  });
});
