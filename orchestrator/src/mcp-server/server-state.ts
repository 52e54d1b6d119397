import type { ServeSettings } from './serve-settings';

/** What the server knows of a run it started in this session. */
export interface SessionRun {
  runId: string;
  repository: string;
  /** The task's first line, shortened: for status listings. */
  task: string;
  startedAt: string;
  /** The last event its child printed while it is going (for status). */
  lastEvent?: string;
}

/**
 * The server's session: the runs it started (status and approve act on these only, so one MCP
 * caller cannot answer a run it did not start, nor a person's), the ones going now, and the
 * signal that stops them all when the connection closes.
 */
export class ServerState {
  readonly runs = new Map<string, SessionRun>();
  /** Runs whose child (run or resume) is going: at most settings.maxRuns. */
  readonly live = new Set<string>();
  readonly stopping = new AbortController();
  private readonly going = new Set<Promise<unknown>>();

  constructor(readonly settings: ServeSettings) {}

  /** Why a new run or resume cannot start now, or undefined when a slot is free. */
  busy(): string | undefined {
    if (this.stopping.signal.aborted) return 'the server is stopping';
    if (this.live.size >= this.settings.maxRuns)
      return (
        `${this.live.size} run(s) are going, the most this server runs at once (--max-runs ` +
        `${this.settings.maxRuns}); wait for one to end (the status tool lists them) and call again`
      );
    return undefined;
  }

  /**
   * Takes a slot for `runId` at once (before anything is awaited, so two calls at the same moment
   * cannot both take the last one), or says why there is none.
   */
  reserve(runId: string): string | undefined {
    const why = this.busy();
    if (why === undefined) this.live.add(runId);
    return why;
  }

  /** Holds a slot for `runId` while `work` goes (taking it, unless reserve did), and frees it after. */
  async hold<T>(runId: string, work: () => Promise<T>): Promise<T> {
    this.live.add(runId);
    const p = work();
    this.going.add(p);
    try {
      return await p;
    } finally {
      this.going.delete(p);
      this.live.delete(runId);
    }
  }

  /** Cancels every run going (each child gets SIGINT and ends its run cleanly) and waits for them, bounded. */
  async stop(waitMs: number): Promise<void> {
    this.stopping.abort();
    await Promise.race([Promise.allSettled([...this.going]), new Promise((r) => setTimeout(r, waitMs).unref())]);
  }
}
