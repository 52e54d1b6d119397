import { eventMsgId } from './names';
import { RunFencedError, StoreUnavailableError } from './store-errors';

/** What the replica needs from JetStream (a fake in unit tests). */
export interface ReplicaTransport {
  /** Publish with a message id and expected-last-subject-sequence; the stream sequence it got. */
  publish(subject: string, line: string, o: { msgID: string; expectLast: number }): Promise<PublishAck>;
  /** The subject's last message, or undefined when it has none. */
  lastOnSubject(subject: string): Promise<StoredEvent | undefined>;
  /** The message at a stream sequence. */
  messageAt(seq: number): Promise<StoredEvent>;
}

export interface PublishAck {
  seq: number;
  /** The stream already held a message with this id (in its duplicate window): it is at `seq`. */
  duplicate: boolean;
}

export interface StoredEvent {
  seq: number;
  msgId: string | null;
  data: string;
}

export interface ReplicaOptions {
  /** The stream sequence of the run's last event in the store (0: none). Unknown: read before the first publish. */
  lastStreamSeq?: number;
  /** Tries of one append through lost acks and a lost connection before giving up. */
  maxAttempts?: number;
  retryDelayMs?: number;
}

const isWrongLast = (e: unknown): boolean => /wrong last sequence/i.test(String((e as Error)?.message ?? e));

/**
 * A run's events written through to its subject, in order, one append in flight (each expects the
 * stream sequence the previous one got, so a second writer on the run is refused by the stream).
 * `append` only queues: the run's own log stays synchronous; `flush` waits for every ack.
 *
 * A lost ack is settled by reading the subject's last message: ours (its message id) means stored;
 * our previous event means not stored, so the same message is sent again (its id makes it stored
 * once); anything else is another writer, and the replica is fenced for good.
 */
export class EventReplica {
  readonly #queue: { seq: number; line: string }[] = [];
  /** The last event this replica stored, to know it again (message ids alone are not enough: a
   * writer that took the run over numbers its events the same way). */
  #stored: { msgId: string; line: string } | undefined;
  #lastStreamSeq: number | undefined;
  #nextSeq: number | undefined;
  #pump: Promise<void> | undefined;
  #fenced: RunFencedError | undefined;
  #failed: Error | undefined;
  readonly #maxAttempts: number;
  readonly #retryDelayMs: number;

  constructor(
    readonly runId: string,
    readonly subject: string,
    readonly transport: ReplicaTransport,
    o: ReplicaOptions = {},
  ) {
    this.#lastStreamSeq = o.lastStreamSeq;
    this.#maxAttempts = o.maxAttempts ?? 40;
    this.#retryDelayMs = o.retryDelayMs ?? 250;
  }

  get fenced(): RunFencedError | undefined {
    return this.#fenced;
  }

  /** Stream sequence of the last event this replica saw stored (undefined before the first). */
  get lastStreamSeq(): number | undefined {
    return this.#lastStreamSeq;
  }

  /** Queue event `seq` (the log's next) for publishing. Never blocks and never throws for the store. */
  append(seq: number, line: string): void {
    if (this.#nextSeq !== undefined && seq !== this.#nextSeq)
      throw new Error(`replica of run ${this.runId}: event ${seq} appended after ${this.#nextSeq - 1}`);
    this.#nextSeq = seq + 1;
    if (this.#fenced || this.#failed) return;
    this.#queue.push({ seq, line });
    this.#pump ??= this.#drain().finally(() => (this.#pump = undefined));
  }

  /** Resolves once every appended event is acked by the stream; rejects if fenced or the store failed. */
  async flush(): Promise<void> {
    while (this.#pump) await this.#pump;
    if (this.#fenced) throw this.#fenced;
    if (this.#failed) throw this.#failed;
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0 && !this.#fenced && !this.#failed) {
      const next = this.#queue[0]!;
      try {
        this.#lastStreamSeq = await this.#store(next.seq, next.line);
        this.#stored = { msgId: eventMsgId(this.runId, next.seq), line: next.line };
        this.#queue.shift();
      } catch (e) {
        if (e instanceof RunFencedError) this.#fenced = e;
        else this.#failed = e as Error;
      }
    }
  }

  async #store(seq: number, line: string): Promise<number> {
    const msgID = eventMsgId(this.runId, seq);
    const previous = seq === 0 ? null : eventMsgId(this.runId, seq - 1);
    let last: unknown;
    // Growing to 8 times the delay (2 s): a failover on a loaded machine outlasts 40 quick tries (503 is at once).
    let wait = this.#retryDelayMs;
    for (let attempt = 0; attempt < this.#maxAttempts; attempt++) {
      if (attempt > 0) {
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(8 * this.#retryDelayMs, Math.ceil(wait * 1.5));
      }
      try {
        this.#lastStreamSeq ??= await this.#startingPoint(seq, previous);
        const ack = await this.transport.publish(this.subject, line, { msgID, expectLast: this.#lastStreamSeq });
        if (!ack.duplicate) return ack.seq;
        // A duplicate id: ours from an earlier try, or another writer's event with the same number.
        const there = await this.transport.messageAt(ack.seq);
        if (there.data === line) return ack.seq;
        throw this.#fence(seq, `${msgID} with other content`);
      } catch (e) {
        if (e instanceof RunFencedError) throw e;
        last = e;
      }
      // Stored or not? The subject's last message says; a refusal for a wrong last sequence is settled the same way.
      let stored;
      try {
        stored = await this.transport.lastOnSubject(this.subject);
      } catch (e) {
        last = e;
        continue;
      }
      if (stored?.msgId === msgID && stored.data === line) return stored.seq;
      const atPrevious = this.#isOurPrevious(previous, stored);
      if (!atPrevious || isWrongLast(last)) {
        if (atPrevious && stored)
          this.#lastStreamSeq = stored.seq; // our own stale view: retry from the stored head
        else throw this.#fence(seq, stored?.msgId ?? null);
      }
    }
    throw new StoreUnavailableError(
      `event ${seq} of run ${this.runId} could not be stored in ${this.#maxAttempts} tries ` +
        `(${(last as Error)?.message ?? String(last)}); the run stops before acting. ` +
        'Check the NATS server, then resume the run.',
    );
  }

  /** Where a replica that was not told the stream sequence starts: after the store's copy of event `seq - 1`. */
  async #startingPoint(seq: number, previous: string | null): Promise<number> {
    const stored = await this.transport.lastOnSubject(this.subject);
    if (previous === null ? stored === undefined : stored?.msgId === previous) return stored?.seq ?? 0;
    throw this.#fence(seq, stored?.msgId ?? null);
  }

  #isOurPrevious(previous: string | null, stored: StoredEvent | undefined): boolean {
    if (previous === null) return stored === undefined;
    if (stored?.msgId !== previous) return false;
    // Stored by this replica: the same bytes. Before this replica's first store (a resumed run) the id must do.
    return this.#stored === undefined || this.#stored.line === stored.data;
  }

  #fence(seq: number, found: string | null): RunFencedError {
    return new RunFencedError(
      this.runId,
      `the store's last event is ${found ?? 'none'} where this process expected ` +
        `${seq === 0 ? 'none' : eventMsgId(this.runId, seq - 1)} before appending ${eventMsgId(this.runId, seq)}`,
    );
  }
}
