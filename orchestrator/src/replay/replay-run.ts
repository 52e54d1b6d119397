import { newId, type EventEnvelope, type ReplayMode } from '@gatehouse/shared';
import { visible } from '../approval/channels/screen';
import { StateTracker } from '../events/state';
import { RunLog } from '../events/store';
import { ReplayError } from './replay-error';
import { refuseTampered } from './refuse-tampered';
import { tee } from '../run/tee';
import { REPLAY_MODES } from './replay-modes';
import type { ReplayOptions, ReplayOutcome } from './replay-types';

export interface ReplayResult {
  replayRunId: string;
  of: string;
  outcome: ReplayOutcome;
}

/**
 * One replay, recorded as a run of its own:
 *   1. read the replayed run's log (read-only: no lock, nothing written beside it), refusing one that
 *      fails `gatehouse verify` (evidence of an edit): a replay of it would not be of what ran;
 *   2. let the mode check its options against it (bad input stops here, nothing written);
 *   3. create the replay's log: run.started names the run it replays (`replay.of`), the mode, and
 *      the hash of the replayed log's last event, so the replay is of exactly that log;
 *   4. run the mode, which appends its `replay.*` step events;
 *   5. record `replay.summary` and `run.completed` (failed, with the reason, if the mode threw).
 */
export async function replayRun(
  of: string,
  o: ReplayOptions,
  hooks: { onEvent?: (e: EventEnvelope) => void; say?: (line: string) => void } = {},
): Promise<ReplayResult> {
  // 1.
  const recorded = RunLog.readEvents(o.stateDir, of);
  const unanchored = refuseTampered(o.stateDir, of, o.key);
  const last = recorded.at(-1);
  const started = recorded.find((e) => e.type === 'run.started');
  if (!last || !started || started.type !== 'run.started') {
    throw new ReplayError('refused', `run ${of} has no run.started event: there is nothing to replay`);
  }
  if (started.data.replay) {
    const r = started.data.replay;
    throw new ReplayError(
      'refused',
      `run ${of} is itself a replay (${r.mode}) of ${r.of}: replay the original run (gatehouse replay ${r.of})`,
    );
  }
  // 2.
  const runner = await modeRunner(o.mode);
  const prepared = await runner.prepare(recorded, o);
  // 3.
  const replayRunId = newId('run');
  const raw = RunLog.create(o.stateDir, replayRunId, o.key ? { key: o.key } : {});
  const log = tee(raw, new StateTracker(), hooks.onEvent);
  try {
    log.append('run.started', 'user', {
      task: `replay ${o.mode} of ${of}`,
      mode: 'replay',
      surface: [],
      ...(started.data.repo !== undefined ? { repo: started.data.repo } : {}),
      ...(prepared.record.model ? { model: prepared.record.model } : {}),
      lineage: [replayRunId],
      replay: { of, mode: o.mode, headHash: last.hash, ...prepared.record },
    });
    // 4.
    // Lines for a person carry what models wrote (tool names, calls): control bytes are shown, never sent.
    const say = (line: string) => hooks.say?.(visible(line));
    if (unanchored) say(unanchored);
    const signal = o.signal ?? new AbortController().signal;
    let outcome: ReplayOutcome;
    try {
      outcome = await prepared.run({
        options: o,
        of,
        recorded,
        replayRunId,
        log,
        signal,
        say,
      });
    } catch (e) {
      const reason = `internal_error: ${(e as Error).message}`.slice(0, 2000);
      log.append('run.completed', 'runtime', { status: 'failed', stopReason: reason, decidedBy: 'replay' });
      throw e;
    }
    // 5.
    log.append('replay.summary', 'runtime', { mode: o.mode, of, ...outcome });
    log.append('run.completed', 'runtime', {
      status: 'final',
      stopReason: `replay_${outcome.verdict}`,
      decidedBy: 'replay',
    });
    return { replayRunId, of, outcome };
  } finally {
    raw.close();
  }
}

async function modeRunner(mode: ReplayMode) {
  const load = REPLAY_MODES[mode];
  if (!load) throw new ReplayError('usage', `replay mode ${mode} is not available in this build`);
  return load();
}

/** A replay's exit code: 0 when nothing that matters differed, 1 when it did (CI gates on it). */
export function replayExitCode(outcome: ReplayOutcome): number {
  return outcome.verdict === 'match' || outcome.verdict === 'changed' ? 0 : 1;
}
