import type { EventEnvelope, ReplayMode, ReplayOf } from '@gatehouse/shared';
import type { LogKey } from '../events/key';
import type { LogPort } from '../tools/ports';

/** What `gatehouse replay` was asked to do. */
export interface ReplayOptions {
  mode: ReplayMode;
  stateDir: string;
  /** dry-run: the policy file to decide with (default: the one the run would load today). */
  policyFile?: string;
  /** model: the model spec given the recorded context. */
  modelSpec?: string;
  /** execution: let calls that are not read-only run too (inside the fresh sandbox only). */
  allowWrites?: boolean;
  signal?: AbortSignal;
  /** The key the replay's own log is anchored with (default: the installation's). */
  key?: LogKey;
}

/** What a mode works from and writes to. */
export interface ReplayContext {
  options: ReplayOptions;
  /** The replayed run's id and its events, read once when the replay began (never written). */
  of: string;
  recorded: readonly EventEnvelope[];
  /** The replay's own run id (its log's); execution mode names its sandbox after it. */
  replayRunId?: string;
  /** The replay's own log: a mode appends its `replay.*` step events here. */
  log: LogPort;
  signal: AbortSignal;
  /** A line for a person (progress); `--json` prints events instead. */
  say(line: string): void;
}

/** A mode's verdict; the replay records it as `replay.summary`. */
export interface ReplayOutcome {
  compared: number;
  differed: number;
  skipped: number;
  verdict: 'match' | 'changed' | 'denied' | 'diverged' | 'drift' | 'mismatch';
}

/**
 * A replay mode: `prepare` checks its options and the recorded log before the replay's own run is
 * created (bad input ends there, with nothing written) and returns what run.started records of it;
 * `run` does the comparing.
 */
export interface ReplayModeRunner {
  prepare(recorded: readonly EventEnvelope[], options: ReplayOptions): Promise<PreparedReplay>;
}

export interface PreparedReplay {
  /** Fields of `run.started.replay` beyond of/mode/headHash (the policy or model replayed against). */
  record: Partial<Pick<ReplayOf, 'policy' | 'model' | 'allowWrites'>>;
  run(ctx: ReplayContext): Promise<ReplayOutcome>;
}
