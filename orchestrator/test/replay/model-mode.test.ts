import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { RunLog } from '../../src/events/store';
import type { Script } from '../../src/providers/scripted';
import { ReplayError } from '../../src/replay/replay-error';
import { replayExitCode, replayRun } from '../../src/replay/replay-run';
import { recordRun, scriptFile } from './recorded-run';

process.env.GATEHOUSE_KEY_FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-replay-key-')), 'log.key');

const FILES = { 'greet.js': 'console.log("helo")\n' };
const READ = { name: 'read_file', input: { path: 'greet.js' } };
// Keys in sorted order: the log stores inputs as canonical JSON, while the loop hashed the context with the
// model's own key order (JSON.stringify in loop.ts), so only sorted inputs rebuild to the recorded hash.
const EDIT = { name: 'edit_file', input: { newText: 'hello', oldText: 'helo', path: 'greet.js' } };
const RUN = { name: 'bash', input: { command: 'node greet.js' } };
const RECORDED: Script = {
  turns: [
    { text: 'Reading it first.', toolCalls: [READ] },
    { toolCalls: [EDIT] },
    { toolCalls: [RUN] },
    { final: 'Changed greet.js (obs-2).' },
  ],
};

const ofType = (events: readonly EventEnvelope[], type: string) => events.filter((e) => e.type === type);

async function replayWith(script: Script) {
  const rec = await recordRun(RECORDED, FILES);
  expect(rec.outcome.status).toBe('final');
  const result = await replayRun(rec.runId, {
    mode: 'model',
    stateDir: rec.stateDir,
    modelSpec: `scripted:${scriptFile(script)}`,
  });
  return { rec, result, events: RunLog.readEvents(rec.stateDir, result.replayRunId) };
}

describe('replay --mode model', () => {
  it('a model that makes the recorded calls matches, turn by turn, on the recorded context', async () => {
    // Other text and key order count for nothing: the same actions are the same turn.
    const same: Script = {
      turns: [
        { text: 'something else entirely', toolCalls: [READ] },
        { toolCalls: [{ name: 'edit_file', input: { path: 'greet.js', oldText: 'helo', newText: 'hello' } }] },
        { toolCalls: [RUN] },
        { final: 'Done, in other words (obs-2).' },
      ],
    };
    const { rec, result, events } = await replayWith(same);
    expect(result.outcome).toEqual({ compared: 4, differed: 0, skipped: 0, verdict: 'match' });
    expect(replayExitCode(result.outcome)).toBe(0);
    const turns = ofType(events, 'replay.turn').map((e) => e.data as Record<string, unknown>);
    expect(turns.map((t) => t.turn)).toEqual([1, 2, 3, 4]);
    // The context given to the new model is exactly the one the recorded model saw.
    const recorded = ofType(RunLog.readEvents(rec.stateDir, rec.runId), 'model.request');
    turns.forEach((t, i) => {
      const ctx = t.context as { recorded: string; replayed: string };
      expect(ctx.recorded).toBe((recorded[i]!.data as { contextSha256: string }).contextSha256);
      expect(ctx.replayed).toBe(ctx.recorded);
      expect(t.match).toBe(true);
    });
    expect(turns[2]).toMatchObject({ observations: ['obs-1', 'obs-2'], calls: [{ name: 'bash', input: RUN.input }] });
    expect(ofType(events, 'replay.divergence')).toHaveLength(0);
    // The replay's own model usage is on record, as any run's.
    const outputs = ofType(events, 'model.output');
    expect(outputs).toHaveLength(4);
    for (const o of outputs)
      expect((o.data as { usage: { inputTokens: number } }).usage.inputTokens).toBeGreaterThan(0);
    expect(events[0]!.data).toMatchObject({ replay: { of: rec.runId, mode: 'model' } });
    // Nothing executed: the replay's log has no tool event at all.
    expect(events.filter((e) => e.type.startsWith('tool.'))).toEqual([]);
  });

  it('a model that calls something else at turn 2 diverges there, with both calls on record', async () => {
    const other = { name: 'write_file', input: { path: 'greet.js', content: 'console.log("hello")\n' } };
    const differs: Script = { turns: [{ toolCalls: [READ] }, { text: 'rewrite it', toolCalls: [other] }] };
    const { rec, result, events } = await replayWith(differs);
    expect(result.outcome).toEqual({ compared: 2, differed: 1, skipped: 2, verdict: 'diverged' });
    expect(replayExitCode(result.outcome)).toBe(1);
    expect(ofType(events, 'replay.turn').map((e) => (e.data as { turn: number }).turn)).toEqual([1]);
    const [div] = ofType(events, 'replay.divergence');
    const recordedTurn2 = ofType(RunLog.readEvents(rec.stateDir, rec.runId), 'model.request')[1]!;
    expect(div!.data).toMatchObject({
      turn: 2,
      contextSha256: (recordedTurn2.data as { contextSha256: string }).contextSha256,
      recorded: { text: '', calls: [{ callId: 'call_1_0', name: 'edit_file', input: EDIT.input }] },
      replayed: { text: 'rewrite it', calls: [{ name: 'write_file', input: other.input }] },
    });
    expect((div!.data as { reason: string }).reason).toMatch(/edit_file.*write_file/);
    expect(ofType(events, 'replay.summary')[0]!.data).toMatchObject({ verdict: 'diverged', differed: 1 });
  });

  it('the same tool with another input diverges; an answer where the run called a tool diverges', async () => {
    const input = await replayWith({
      turns: [{ toolCalls: [READ] }, { toolCalls: [{ ...EDIT, input: { ...EDIT.input, newText: 'Hello' } }] }],
    });
    expect(input.result.outcome.verdict).toBe('diverged');
    expect(ofType(input.events, 'replay.divergence')[0]!.data).toMatchObject({ turn: 2 });
    const answered = await replayWith({ turns: [{ final: 'nothing to do' }] });
    expect(ofType(answered.events, 'replay.divergence')[0]!.data).toMatchObject({
      turn: 1,
      reason: 'the new model answered; the recorded one called read_file',
      replayed: { text: 'nothing to do', calls: [] },
    });
  });

  it('without --model it is a usage error, and nothing is written', async () => {
    const rec = await recordRun(RECORDED, FILES);
    const before = readdirSync(path.join(rec.stateDir, 'runs'));
    const err = await replayRun(rec.runId, { mode: 'model', stateDir: rec.stateDir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReplayError);
    expect((err as ReplayError).kind).toBe('usage');
    expect((err as ReplayError).message).toMatch(/--model/);
    expect(readdirSync(path.join(rec.stateDir, 'runs'))).toEqual(before);
  });
});
