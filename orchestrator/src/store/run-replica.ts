import type { KV } from 'nats';
import type { LogKey } from '../events/key';
import type { LogReplica, ReplicaFlushPoint } from '../events/replica-port';
import type { EventReplica } from './event-replica';
import { retryThroughFailover } from './failover-retry';
import { encodeStoreHead } from './run-head-record';
import type { RunFiles } from './run-files';

/**
 * What a RunLog writes through to: its events (EventReplica), then at each flush its files and its
 * head. Flushes run one after another; `settled` waits for the last (a log closes without waiting).
 * Events appended while held wait here, in order, until `release` or the next flush hands them on.
 */
export class RunReplica implements LogReplica {
  #chain: Promise<void> = Promise.resolve();
  #error: Error | undefined;
  #held: Array<{ seq: number; line: string }> | undefined;

  constructor(
    readonly events: EventReplica,
    readonly files: RunFiles,
    readonly heads: KV,
    readonly key: LogKey,
    /** The stream's creation time, recorded in every head (run-head-record.ts). */
    readonly stream: string,
  ) {}

  get runId(): string {
    return this.events.runId;
  }

  /** Stream sequence of the run's last stored event: a writer that continues the run starts from it. */
  get lastStreamSeq(): number | undefined {
    return this.events.lastStreamSeq;
  }

  append(seq: number, line: string): void {
    if (this.#held) this.#held.push({ seq, line });
    else this.events.append(seq, line);
  }

  hold(): void {
    this.#held ??= [];
  }

  release(): void {
    const held = this.#held;
    this.#held = undefined;
    for (const e of held ?? []) this.events.append(e.seq, e.line);
  }

  flush(at: ReplicaFlushPoint): Promise<void> {
    // A flush is where the store must have everything: what was held goes first.
    this.release();
    const run = async () => {
      await this.events.flush();
      // Files and head go to buckets whose leader may be on a node just lost: tried through the failover.
      await retryThroughFailover(() => this.files.upload(at.runDir));
      const streamSeq = this.events.lastStreamSeq;
      const head = at.head;
      if (head && streamSeq !== undefined)
        await retryThroughFailover(() =>
          this.heads.put(this.runId, encodeStoreHead(this.key, { ...head, streamSeq, stream: this.stream })),
        );
    };
    const p = this.#chain.then(run);
    this.#chain = p.catch((e: unknown) => void (this.#error ??= e instanceof Error ? e : new Error(String(e))));
    return p;
  }

  /** Waits for every flush asked for; rejects with the first failure (a fenced run's RunFencedError). */
  async settled(): Promise<void> {
    await this.#chain;
    await this.events.flush();
    if (this.#error !== undefined) throw this.#error;
  }
}
