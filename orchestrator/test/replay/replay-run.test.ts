import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { newId, type ReplayMode } from '@gatehouse/shared';
import { LogKey } from '../../src/events/key';
import { listRuns } from '../../src/events/runs';
import { RunLog } from '../../src/events/store';
import { verifyLog } from '../../src/events/verify';
import { ReplayError } from '../../src/replay/replay-error';
import { REPLAY_MODES } from '../../src/replay/replay-modes';
import { replayExitCode, replayRun } from '../../src/replay/replay-run';
import type { ReplayModeRunner, ReplayOutcome } from '../../src/replay/replay-types';

const cli = fileURLToPath(new URL('../../bin/gatehouse.mjs', import.meta.url));

/** The replay skeleton with a mode of the test's own: what every mode gets and what every replay records. */
const saved = { ...REPLAY_MODES };
afterEach(() => {
  for (const k of Object.keys(REPLAY_MODES) as ReplayMode[]) delete REPLAY_MODES[k];
  Object.assign(REPLAY_MODES, saved);
});

function recordedRun() {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-replay-run-'));
  const key = LogKey.load({ env: { GATEHOUSE_KEY_FILE: path.join(stateDir, 'key', 'log.key') }, create: true });
  const runId = newId('run');
  const log = RunLog.create(stateDir, runId, { key });
  log.append('run.started', 'user', { task: 'recorded task', mode: 'sandboxed-auto', surface: ['bash'], repo: '/r' });
  log.append('run.completed', 'runtime', { status: 'final', stopReason: 'answer', answer: 'done' });
  log.close();
  return { stateDir, key, runId };
}

function modeReturning(outcome: ReplayOutcome | Error, seen: { ctx?: unknown } = {}): ReplayModeRunner {
  return {
    prepare: () =>
      Promise.resolve({
        record: { model: 'scripted:x' },
        run: (ctx) => {
          seen.ctx = ctx;
          ctx.log.append('replay.turn', 'runtime', {
            turn: 1,
            context: { recorded: 'a'.repeat(64), replayed: 'a'.repeat(64) },
            state: { recorded: null, replayed: 'b'.repeat(64) },
            match: true,
            observations: [],
            calls: [],
          });
          return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
        },
      }),
  };
}

describe('replayRun', () => {
  it('records the replay as a run of its own that names the run, the mode and the head it replays', async () => {
    const { stateDir, key, runId } = recordedRun();
    const before = RunLog.readEvents(stateDir, runId);
    REPLAY_MODES.trace = () =>
      Promise.resolve(modeReturning({ compared: 1, differed: 0, skipped: 0, verdict: 'match' }));
    const r = await replayRun(runId, { mode: 'trace', stateDir, key });
    const events = RunLog.readEvents(stateDir, r.replayRunId);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'replay.turn', 'replay.summary', 'run.completed']);
    expect(events[0]!.data).toMatchObject({
      task: `replay trace of ${runId}`,
      mode: 'replay',
      repo: '/r',
      model: 'scripted:x',
      replay: { of: runId, mode: 'trace', headHash: before.at(-1)!.hash, model: 'scripted:x' },
    });
    expect(events[2]!.data).toEqual({
      mode: 'trace',
      of: runId,
      compared: 1,
      differed: 0,
      skipped: 0,
      verdict: 'match',
    });
    expect(events[3]!.data).toMatchObject({ status: 'final', stopReason: 'replay_match', decidedBy: 'replay' });
    // The replayed log is untouched, and the replay's own log verifies under the key.
    expect(RunLog.readEvents(stateDir, runId)).toEqual(before);
    const v = verifyLog(path.join(stateDir, 'runs', r.replayRunId, 'events.jsonl'), { key });
    expect(v.ok, JSON.stringify(v)).toBe(true);
  });

  it('a mode that throws ends the replay failed, with the reason, and the error reaches the caller', async () => {
    const { stateDir, key, runId } = recordedRun();
    REPLAY_MODES.model = () => Promise.resolve(modeReturning(new Error('provider fell over')));
    await expect(replayRun(runId, { mode: 'model', stateDir, key })).rejects.toThrow('provider fell over');
    const replay = listRuns(stateDir).find((r) => r.runId !== runId)!;
    const events = RunLog.readEvents(stateDir, replay.runId);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'replay.turn', 'run.completed']);
    expect(events.at(-1)!.data).toMatchObject({
      status: 'failed',
      stopReason: 'internal_error: provider fell over',
      decidedBy: 'replay',
    });
  });

  it('refuses to replay a replay, and a mode this build lacks is a usage error; neither writes a run', async () => {
    const { stateDir, key, runId } = recordedRun();
    REPLAY_MODES.trace = () =>
      Promise.resolve(modeReturning({ compared: 0, differed: 0, skipped: 0, verdict: 'match' }));
    const r = await replayRun(runId, { mode: 'trace', stateDir, key });
    const err = await replayRun(r.replayRunId, { mode: 'trace', stateDir, key }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReplayError);
    expect((err as ReplayError).kind).toBe('refused');
    expect((err as ReplayError).message).toContain(`itself a replay (trace) of ${runId}`);
    delete REPLAY_MODES.execution;
    const missing = await replayRun(runId, { mode: 'execution', stateDir, key }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ kind: 'usage', message: 'replay mode execution is not available in this build' });
  });

  it('a replay is not resumed: the CLI says to replay the run again', async () => {
    const { stateDir, key, runId } = recordedRun();
    REPLAY_MODES.trace = () =>
      Promise.resolve(modeReturning({ compared: 0, differed: 0, skipped: 0, verdict: 'match' }));
    const r = await replayRun(runId, { mode: 'trace', stateDir, key });
    const out = spawnSync(process.execPath, [cli, 'resume', r.replayRunId, '--state-dir', stateDir], {
      encoding: 'utf8',
      env: { ...process.env, GATEHOUSE_KEY_FILE: path.join(stateDir, 'key', 'log.key'), CI: 'true' },
      input: '',
      timeout: 60_000,
    });
    expect(out.status, out.stderr).toBe(1);
    expect(out.stderr).toContain(`is a replay (trace) of ${runId}; a replay is not resumed`);
    expect(out.stderr).toContain(`gatehouse replay ${runId} --mode trace`);
  });

  it('exits 1 only for a verdict that means something differed that matters', () => {
    const at = (verdict: ReplayOutcome['verdict']) => replayExitCode({ compared: 1, differed: 0, skipped: 0, verdict });
    expect([at('match'), at('changed'), at('denied'), at('diverged'), at('drift'), at('mismatch')]).toEqual([
      0, 0, 1, 1, 1, 1,
    ]);
  });
});
