import { existsSync } from 'node:fs';
import path from 'node:path';
import { isEvent, type EventEnvelope } from '@gatehouse/shared';
import type { LogKey } from '../events/key';
import { EVENTS_FILE, runDir } from '../events/paths';
import { RunLog } from '../events/store';
import { refuseTampered } from './refuse-tampered';
import { ReplayError } from './replay-error';

/** A sub-agent's run below the replayed one, as its own log tells it. */
export interface RecordedSubRun {
  runId: string;
  /** Its calls' ids are shown after this (the delegate calls that led to it: `call_1_0/`). */
  prefix: string;
  /** The paths each sub-agent on the way down was handed: its policy is narrowed by each, in turn. */
  narrowings: string[][];
  events: EventEnvelope[];
}

/** More sub-agents than any tree gatehouse runs: a log claiming more is not walked further. */
const MAX_SUB_RUNS = 10_000;

/**
 * Every sub-agent below a run, depth first in the order they were spawned: a run's actions include
 * its sub-agents', so a replay that judges them (dry-run) reads their logs too. Each log is held to
 * what the run's own is (refused when it fails verify); a sub-agent whose log is gone is refused,
 * saying which, since what it did could no longer be judged.
 */
export function recordedSubRuns(
  stateDir: string,
  root: readonly EventEnvelope[],
  key: LogKey | undefined,
): RecordedSubRun[] {
  const out: RecordedSubRun[] = [];
  const seen = new Set<string>();
  const walk = (events: readonly EventEnvelope[], prefix: string, narrowings: string[][]) => {
    const runId = events[0]?.runId;
    for (const e of events) {
      if (!isEvent(e, 'agent.spawned') || e.data.parentRunId !== runId || seen.has(e.data.childRunId)) continue;
      const child = e.data.childRunId;
      seen.add(child);
      if (seen.size > MAX_SUB_RUNS)
        throw new ReplayError('refused', `run ${runId} names more than ${MAX_SUB_RUNS} sub-agents`);
      if (!existsSync(path.join(runDir(stateDir, child), EVENTS_FILE)))
        throw new ReplayError(
          'refused',
          `sub-agent run ${child} (spawned by ${e.data.callId} of ${String(runId)}) has no log in ${stateDir}: ` +
            'what it did cannot be judged again; replay with the state directory that holds the whole tree',
        );
      refuseTampered(stateDir, child, key);
      const sub: RecordedSubRun = {
        runId: child,
        prefix: `${prefix}${e.data.callId}/`,
        narrowings: [...narrowings, [...e.data.paths]],
        events: RunLog.readEvents(stateDir, child),
      };
      out.push(sub);
      walk(sub.events, sub.prefix, sub.narrowings);
    }
  };
  walk(root, '', []);
  return out;
}
