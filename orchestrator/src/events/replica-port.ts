import type { RunHead } from './heads';

/**
 * Where a RunLog writes its events through to, beside its file (the JetStream store, store/): the
 * log hands over each sealed line as it is appended, synchronously, and awaits `flush` at the
 * points where it syncs before acting. Defined here so the log does not depend on the store.
 */
export interface LogReplica {
  /** Event `seq`'s line, exactly as written to the file. Must not block or throw for the store. */
  append(seq: number, line: string): void;
  /** Resolves once every appended event (and the run's files and head) is stored; rejects when it cannot be. */
  flush(at: ReplicaFlushPoint): Promise<void>;
  /**
   * Keep events appended from now on from the store until `release` or the next `flush`: a call that
   * changed the workspace must not be on record there before the checkpoint that saved its changes
   * (loop/checkpoint.ts), or a takeover on another engine finds a change nothing saved.
   */
  hold?(): void;
  release?(): void;
}

export interface ReplicaFlushPoint {
  runDir: string;
  /** The head the log has just synced (undefined before the first event). */
  head: RunHead | undefined;
}
