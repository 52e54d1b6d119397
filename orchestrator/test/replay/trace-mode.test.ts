import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId, type EventDataOf, type EventEnvelope } from '@gatehouse/shared';
import { StateTracker } from '../../src/events/state';
import { stateSha256 } from '../../src/events/state-hash';
import { RunLog } from '../../src/events/store';
import { rebuildTurns } from '../../src/replay/recorded-context';
import { replayExitCode, replayRun } from '../../src/replay/replay-run';
import { tee } from '../../src/run/tee';
import { recordRun, resumeRun, type RecordedRun, type RunSpec } from './recorded-runs';

const BROKEN = 'export const add = (a, b) => a - b;\n';
const files = { 'src/math.js': BROKEN, 'package.json': '{"scripts":{"test":"node test.js"}}\n' };
/** `npm test` passes once add() adds. */
const npmTest: RunSpec['exec'] = ({ command, workspace }) =>
  command === 'npm test'
    ? workspace.files.get('src/math.js')?.includes('a + b')
      ? { exitCode: 0, output: 'pass 1\n' }
      : { exitCode: 1, output: 'fail 1\n' }
    : { exitCode: 127, output: `${command}: not found\n` };
const AUTO = { mode: 'sandboxed-auto' };

const fix = [
  { toolCalls: [{ name: 'read_file', input: { path: 'src/math.js' } }] },
  { toolCalls: [{ name: 'edit_file', input: { path: 'src/math.js', oldText: 'a - b', newText: 'a + b' } }] },
  { toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] },
  { final: 'Fixed add() in src/math.js (obs-2). The tests pass (obs-3).' },
];

async function trace(stateDir: string, runId: string) {
  const r = await replayRun(runId, { mode: 'trace', stateDir });
  const events = RunLog.readEvents(stateDir, r.replayRunId);
  const turns = events.filter((e) => e.type === 'replay.turn').map((e) => e.data);
  return { r, events, turns, exit: replayExitCode(r.outcome) };
}

function requests(run: RecordedRun) {
  return run
    .events()
    .filter((e) => e.type === 'model.request')
    .map((e) => e.data);
}

/** Every recorded turn rebuilt with the recorded hashes: the verdict is match, exit 0. */
async function expectMatch(run: RecordedRun) {
  const t = await trace(run.stateDir, run.runId);
  const recorded = requests(run);
  expect(recorded.length).toBeGreaterThan(0);
  expect(t.turns.map((x) => x.turn)).toEqual(recorded.map((x) => x.turn));
  for (const [i, turn] of t.turns.entries()) {
    expect(turn.context).toEqual({ recorded: recorded[i]!.contextSha256, replayed: recorded[i]!.contextSha256 });
    expect(turn.state).toEqual({ recorded: recorded[i]!.stateSha256, replayed: recorded[i]!.stateSha256 });
    expect(turn.match).toBe(true);
  }
  expect(t.r.outcome).toEqual({ compared: recorded.length, differed: 0, skipped: 0, verdict: 'match' });
  expect(t.exit).toBe(0);
  // The replay is a run of its own that names what it replays, and ends with its summary.
  expect(t.events[0]).toMatchObject({ type: 'run.started', data: { replay: { of: run.runId, mode: 'trace' } } });
  expect(t.events.at(-2)).toMatchObject({ type: 'replay.summary', data: { verdict: 'match' } });
  return t;
}

describe('replay --mode trace: a run rebuilt from its log alone', () => {
  it('a plain run: every turn matches, with the observations seen and the calls proposed', async () => {
    const run = await recordRun({ script: { turns: fix }, files, exec: npmTest, policy: AUTO });
    expect(run.outcome.status).toBe('final');
    const t = await expectMatch(run);
    expect(t.turns.map((x) => x.observations)).toEqual([
      [],
      ['obs-1'],
      ['obs-1', 'obs-2'],
      ['obs-1', 'obs-2', 'obs-3'],
    ]);
    expect(t.turns.map((x) => x.calls.map((c) => c.name))).toEqual([['read_file'], ['edit_file'], ['bash'], []]);
    expect(t.turns[1]!.calls[0]).toEqual({
      callId: 'call_1_0',
      name: 'edit_file',
      input: { path: 'src/math.js', oldText: 'a - b', newText: 'a + b' },
    });
  });

  it('a run whose context was compacted: the references are rebuilt with the recorded token budget', async () => {
    const big = 'x'.repeat(3000);
    const reads = Array.from({ length: 7 }, (_, i) => ({
      toolCalls: [{ name: 'read_file', input: { path: `doc${i}.txt` } }],
    }));
    const docs = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`doc${i}.txt`, `${i}${big}\n`]));
    const run = await recordRun({
      script: { turns: [...reads, { final: 'read them all (obs-7)' }] },
      files: docs,
      policy: AUTO,
      contextTokenBudget: 2500,
    });
    const recorded = requests(run);
    expect(recorded.some((r) => r.compacted.length > 0)).toBe(true);
    expect(recorded.every((r) => r.contextTokenBudget === 2500)).toBe(true);
    await expectMatch(run);
  });

  it('a run sent back once by the claims check (run.feedback in its context), one decided by its check', async () => {
    const sentBack = await recordRun({
      script: {
        turns: [
          { toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] },
          { final: 'The tests pass (obs-1).' },
          { final: 'The tests still fail (obs-1).' },
        ],
      },
      files,
      exec: npmTest,
      policy: AUTO,
    });
    expect(sentBack.events().filter((e) => e.type === 'run.feedback')).toHaveLength(1);
    await expectMatch(sentBack);

    const checked = await recordRun({ script: { turns: fix }, files, exec: npmTest, policy: AUTO, check: 'npm test' });
    expect(checked.events().some((e) => e.type === 'tool.intent' && e.data.callId.startsWith('check_'))).toBe(true);
    const t = await expectMatch(checked);
    // The check is named in the system prompt the trace rebuilt.
    const [first] = rebuildTurns(checked.events());
    expect(first!.context.request.system).toContain('This run has a check command: "npm test"');
    expect(t.turns).toHaveLength(4);
  });

  it('a paused run resumed with more turns: the turns after the resume are rebuilt with the new budgets', async () => {
    const run = await recordRun({
      script: {
        turns: [
          { toolCalls: [{ name: 'read_file', input: { path: 'src/math.js' } }] },
          { toolCalls: [{ name: 'bash', input: { command: 'make deploy' } }] },
          { final: 'deployed (obs-2)' },
        ],
      },
      files,
      exec: () => ({ exitCode: 0, output: 'deployed\n' }),
      policy: { mode: 'sandboxed-auto', ask: ['bash(make deploy*)'] },
      answers: [{ decision: 'pause', channel: 'headless', reason: 'nobody can answer now' }],
    });
    expect(run.outcome.status).toBe('paused');
    grantPending(run);
    await resumeRun(run, { budgets: { maxTurns: 25 } });
    expect(run.outcome.status).toBe('final');
    expect(run.events().some((e) => e.type === 'run.resumed')).toBe(true);
    await expectMatch(run);
    const systems = [...rebuildTurns(run.events())].map((t) => t.context.request.system);
    expect(systems[0]).toContain('at most 20 turns');
    expect(systems.at(-1)).toContain('at most 25 turns');
  });

  it('a run with a sub-agent: the parent and the child each trace to a match', async () => {
    const delegate = {
      task: 'read the math module',
      tools: ['read_file'],
      paths: ['src/**'],
      budget: { turns: 3, toolCalls: 3, tokens: 100_000, seconds: 60 },
      expect: 'what it holds',
    };
    const run = await recordRun({
      script: {
        turns: [{ toolCalls: [{ name: 'delegate', input: delegate }] }, { final: 'The sub-agent read it (obs-1).' }],
        children: [
          {
            turns: [
              { toolCalls: [{ name: 'read_file', input: { path: 'src/math.js' } }] },
              { final: 'add subtracts (obs-1)' },
            ],
          },
        ],
      },
      files,
      policy: AUTO,
    });
    const [child] = run.children();
    expect(child).toBeDefined();
    await expectMatch(run);
    const t = await trace(run.stateDir, child!);
    expect(t.r.outcome).toEqual({ compared: 2, differed: 0, skipped: 0, verdict: 'match' });
  });
});

describe('replay --mode trace: a log whose recorded hashes differ', () => {
  it('a context hash that differs is a mismatch (exit 1); the other turns still match', async () => {
    const run = await recordRun({ script: { turns: fix }, files, exec: npmTest, policy: AUTO });
    const copy = copyLog(run.events(), (turn, d) => (turn === 2 ? { ...d, contextSha256: 'f'.repeat(64) } : d));
    const t = await trace(copy.stateDir, copy.runId);
    expect(t.turns.map((x) => x.match)).toEqual([true, false, true, true]);
    expect(t.turns[1]!.context.recorded).toBe('f'.repeat(64));
    expect(t.turns[1]!.context.replayed).toBe(requests(run)[1]!.contextSha256);
    expect(t.r.outcome).toEqual({ compared: 4, differed: 1, skipped: 0, verdict: 'mismatch' });
    expect(t.exit).toBe(1);
  });

  it('a state hash that differs is a mismatch too', async () => {
    const run = await recordRun({ script: { turns: fix }, files, exec: npmTest, policy: AUTO });
    const copy = copyLog(run.events(), (turn, d) => (turn === 3 ? { ...d, stateSha256: '0'.repeat(64) } : d));
    const t = await trace(copy.stateDir, copy.runId);
    expect(t.turns.map((x) => x.match)).toEqual([true, true, false, true]);
    expect(t.r.outcome.verdict).toBe('mismatch');
  });

  it('a log from before stateSha256 was recorded: state.recorded is null, only the context is compared', async () => {
    const run = await recordRun({ script: { turns: fix }, files, exec: npmTest, policy: AUTO });
    const copy = copyLog(run.events(), (_turn, d) => {
      const { stateSha256: _dropped, ...older } = d;
      return older;
    });
    const t = await trace(copy.stateDir, copy.runId);
    expect(t.turns.map((x) => x.state.recorded)).toEqual([null, null, null, null]);
    expect(t.r.outcome.verdict).toBe('match');
  });
});

/** The run's approval request answered as `gatehouse approve` answers it: a grant in the log. */
function grantPending(run: RecordedRun): void {
  const requested = run.events().find((e) => e.type === 'approval.requested');
  if (requested?.type !== 'approval.requested') throw new Error('no approval request');
  const { log } = RunLog.open(run.stateDir, run.runId);
  const d = requested.data;
  log.append(
    'approval.granted',
    'user',
    {
      requestId: d.requestId,
      callId: d.callId,
      actionHash: d.actionHash,
      executionHash: d.executionHash,
      scope: 'once',
      approver: 'user:cli',
      channel: 'cli',
      reason: '',
    },
    { causationId: requested.id },
  );
  log.close();
}

/**
 * The run's events written again into a new log (a sealed log cannot be edited: its chain would
 * break), each model.request with the state hash of the copy as the loop would have taken it and
 * the recorded context hash (a context holds no ids or times), then changed by `edit`.
 */
function copyLog(
  events: readonly EventEnvelope[],
  edit: (turn: number, d: EventDataOf<'model.request'>) => EventDataOf<'model.request'>,
): { stateDir: string; runId: string } {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-replay-copy-'));
  const runId = newId('run');
  const raw = RunLog.create(stateDir, runId);
  const tracker = new StateTracker();
  const log = tee(raw, tracker);
  for (const e of events) {
    if (e.type === 'model.request') {
      const honest = { ...e.data, stateSha256: stateSha256(tracker.state) };
      log.append('model.request', e.actor, edit(e.data.turn, honest));
    } else log.append(e.type, e.actor, e.data);
  }
  raw.close();
  return { stateDir, runId };
}
