import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, truncateSync, writeSync } from 'node:fs';
import path from 'node:path';
import { acquireWriterLock } from './lock';
import {
  Actor,
  EventData,
  GENESIS_HASH,
  LOG_SCHEMA_VERSION,
  type EventDataOf,
  type EventOf,
  type EventEnvelope,
  type EventType,
} from '@gatehouse/shared';
import type { z } from 'zod';
import { ArtifactStore, fsyncDir } from './artifacts';
import { sealEvent, type UnsealedEvent } from './hash';
import { checkAgainstHead, writeHead, type RunHead } from './heads';
import type { LogReplica } from './replica-port';
import { LogKey } from './key';
import { ARTIFACTS_DIR, assertRunId, EVENTS_FILE, runDir as runDirOf, runsDir } from './paths';
import { Redactor } from './redact';
import { scanLog } from './scan';
import { EventDataError, EventLogCorruptError, refuseUnreadable } from './log-errors';

/**
 * The embedded event store: one append-only JSONL file per run, `<stateDir>/runs/<runId>/events.jsonl`,
 * with `artifacts/` beside it. Each line is the canonical JSON of one sealed event.
 *
 * Durability. An append is ONE write(2) of a complete line on an O_APPEND descriptor. When append()
 * returns, the event is in the kernel's page cache: it survives the process crashing or being killed,
 * but not a power loss or kernel crash. `sync()` fsyncs (artifacts first, then the log), and the
 * pipeline calls it at the points that matter: before any side-effecting execution (so the intent
 * and the approval that allowed it are on disk before the world changes) and at the end of a run.
 * fsync on every append costs milliseconds per event on real disks for little gain, since the
 * events between two side effects are all re-derivable by re-running the step; `fsyncEachAppend`
 * turns it on for those who want it (and for measuring the difference).
 *
 * A write cut short (power loss, a kill in mid-write, a full disk) leaves a torn last line. Opening
 * the log cuts it off and says so; it is never glued to the next event. Anything else wrong with
 * the file (an edited, removed or reordered event) refuses the open: the log is evidence.
 *
 * Anchoring. Every event carries a MAC of its hash under the installation's log key (see key.ts),
 * and `sync()` records the run's head (event count, last hash, whether it completed) apart from the
 * log (see heads.ts). Between two syncs the newest events are protected by their MACs only: cutting
 * them off is the one change verify cannot see, and sync runs before every side effect and at close.
 */

export interface RunLogOptions {
  /** The run this one was delegated from; stamped on every event. */
  parentRunId?: string | null;
  /** Applied to every event's data and every artifact. Default: token shapes only. */
  redactor?: Redactor;
  /** fsync after every append (default false: see the durability note above). */
  fsyncEachAppend?: boolean;
  /** The key that anchors the log. Default: the installation's (see key.ts). */
  key?: LogKey;
  /** A durable shared store every event is also written to (the JetStream store, store/); `flush` waits for it. */
  replica?: LogReplica;
}

export interface AppendOptions {
  causationId?: string | null;
  ts?: Date;
}

export interface Recovered {
  droppedBytes: number;
  reason: string;
}

function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}

const ACTORS: ReadonlySet<string> = new Set(Actor.options);

export class RunLog {
  #unlock: () => void = () => undefined;
  readonly runId: string;
  readonly runDir: string;
  readonly file: string;
  readonly artifacts: ArtifactStore;
  readonly parentRunId: string | null;
  readonly #redactor: Redactor;
  readonly #fsyncEachAppend: boolean;
  readonly #key: LogKey;
  readonly #events: EventEnvelope[];
  /** Seq of the last run.completed, for the head. */
  #completedSeq: number | null;
  /** Event count the head on disk records (so a sync with nothing new writes nothing). */
  #headEvents: number;
  #fd: number | undefined;
  #prevHash: string;
  #dirsSynced: boolean;
  /** Set when a write failed part-way: the file may end in a partial line, so appending stops. */
  #broken: Error | undefined;
  /** The shared store this log writes through to, if any (`hold` keeps events from it for a while). */
  readonly replica: LogReplica | undefined;
  #closing: Promise<void> = Promise.resolve();

  private constructor(args: {
    runId: string;
    runDir: string;
    fd: number;
    events: EventEnvelope[];
    parentRunId: string | null;
    opts: RunLogOptions;
    dirsSynced: boolean;
    key: LogKey;
    headEvents: number;
  }) {
    this.runId = args.runId;
    this.runDir = args.runDir;
    this.file = path.join(args.runDir, EVENTS_FILE);
    this.parentRunId = args.parentRunId;
    // By default the environment's secrets are redacted too: forgetting an option must not leak a key.
    this.#redactor = args.opts.redactor ?? Redactor.fromEnv(process.env);
    this.#fsyncEachAppend = args.opts.fsyncEachAppend ?? false;
    this.#events = args.events;
    this.#key = args.key;
    this.#headEvents = args.headEvents;
    this.#completedSeq = args.events.findLast((e) => e.type === 'run.completed')?.seq ?? null;
    this.#fd = args.fd;
    this.#prevHash = args.events.at(-1)?.hash ?? GENESIS_HASH;
    this.#dirsSynced = args.dirsSynced;
    this.replica = args.opts.replica;
    this.artifacts = new ArtifactStore(path.join(args.runDir, ARTIFACTS_DIR), this.#redactor);
  }

  /** Start a new run's log. Fails if the run already exists. */
  static create(stateDir: string, runId: string, opts: RunLogOptions = {}): RunLog {
    const dir = runDirOf(stateDir, runId);
    if (opts.parentRunId != null) assertRunId(opts.parentRunId);
    // Before anything is created: a key that cannot be used stops the run with the reason.
    const key = opts.key ?? LogKey.load({ stateDir });
    mkdirSync(runsDir(stateDir), { recursive: true });
    try {
      mkdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST')
        throw new Error(`run ${runId} already exists at ${dir}: resume it with RunLog.open or pick a new run id`);
      throw e;
    }
    const unlock = acquireWriterLock(dir, runId);
    const fd = openSync(path.join(dir, EVENTS_FILE), 'ax');
    const log = new RunLog({
      runId,
      runDir: dir,
      fd,
      events: [],
      parentRunId: opts.parentRunId ?? null,
      opts,
      dirsSynced: false,
      key,
      headEvents: 0,
    });
    log.#unlock = unlock;
    return log;
  }

  /**
   * Open an existing run's log to append to it (resume). Verifies the whole chain first; cuts off a
   * torn last line (reported in `recovered`); refuses a log that was tampered with or corrupted.
   */
  static open(stateDir: string, runId: string, opts: RunLogOptions = {}): { log: RunLog; recovered?: Recovered } {
    const dir = runDirOf(stateDir, runId);
    const file = path.join(dir, EVENTS_FILE);
    if (!existsSync(file)) throw new Error(`run ${runId} not found: no ${file}`);
    const key = opts.key ?? LogKey.load({ stateDir });
    // Taken before reading: what is read must be what is appended to.
    const unlock = acquireWriterLock(dir, runId);
    let scan;
    let headEvents = 0;
    try {
      scan = scanLog(readFileSync(file), { runId, keepEvents: true, key });
      refuseUnreadable(file, runId, scan.firstBad);
      // Appending to a log that was cut or rewritten would anchor the forgery: check its head first.
      const head = checkAgainstHead(key, runId, scan.events);
      if ('refusal' in head)
        throw new EventLogCorruptError(file, { line: scan.events.length + 1, reason: head.refusal }, runId);
      headEvents = head.events;
    } catch (e) {
      unlock();
      throw e;
    }
    const logParent = scan.events[0]?.parentRunId;
    if (logParent !== undefined && opts.parentRunId !== undefined && opts.parentRunId !== logParent) {
      unlock();
      throw new Error(`run ${runId} has parent ${String(logParent)}, not ${String(opts.parentRunId)}`);
    }
    let recovered: Recovered | undefined;
    if (scan.firstBad) {
      recovered = {
        droppedBytes: scan.totalBytes - scan.goodBytes,
        reason: `${scan.firstBad.reason} (line ${scan.firstBad.line}); cut off`,
      };
      truncateSync(file, scan.goodBytes);
    }
    for (const e of scan.events) Object.freeze(e);
    const fd = openSync(file, 'a');
    if (recovered) fsyncSync(fd); // the cut must be durable before anything is appended after it
    const log = new RunLog({
      runId,
      runDir: dir,
      fd,
      events: scan.events,
      parentRunId: logParent ?? opts.parentRunId ?? null,
      opts,
      dirsSynced: true,
      key,
      headEvents,
    });
    log.#unlock = unlock;
    return recovered ? { log, recovered } : { log };
  }

  /**
   * Read a run's events without opening it for writing. A torn last line is ignored (left on disk
   * for the next open to cut off); any other damage throws.
   */
  static readEvents(stateDir: string, runId: string): EventEnvelope[] {
    const file = path.join(runDirOf(stateDir, runId), EVENTS_FILE);
    if (!existsSync(file)) throw new Error(`run ${runId} not found: no ${file}`);
    const scan = scanLog(readFileSync(file), { runId, keepEvents: true });
    refuseUnreadable(file, runId, scan.firstBad);
    return scan.events;
  }

  /**
   * Record an event. Synchronous: when it returns, the line is written (see the durability note).
   * Bad `data` is a bug in the caller and throws; nothing is written then.
   */
  append<T extends EventType>(type: T, actor: Actor, data: EventDataOf<T>, opts: AppendOptions = {}): EventOf<T> {
    if (this.#fd === undefined) throw new Error(`run log ${this.runId} is closed`);
    if (this.#broken)
      throw new Error(
        `run log ${this.runId} is unusable after a failed write (${this.#broken.message}); reopen it with ` +
          `RunLog.open, which cuts off the partial line`,
      );
    if (!Object.hasOwn(EventData, type)) {
      throw new EventDataError(
        String(type),
        `unknown event type ${JSON.stringify(type)}: every event type needs a data schema in ` +
          `shared/src/events/types.ts`,
      );
    }
    if (!ACTORS.has(actor))
      throw new EventDataError(
        type,
        `invalid actor ${JSON.stringify(actor)} for ${type}: expected one of ${Actor.options.join(', ')}`,
      );
    const causationId = opts.causationId ?? null;
    if (causationId !== null && (typeof causationId !== 'string' || causationId.length > 128)) {
      throw new EventDataError(type, `invalid causationId for ${type}: a string of at most 128 characters, or null`);
    }

    const schema = EventData[type] as z.ZodType;
    const checked = schema.safeParse(data);
    if (!checked.success)
      throw new EventDataError(
        type,
        `invalid data for ${type} (a bug in the code appending it): ${issues(checked.error)}`,
      );
    const clean = this.#redactor.redactDeep(checked.data);
    if (clean !== checked.data) {
      // A redaction inside a constrained field (an id, a hash) would make the event fail verification.
      const again = schema.safeParse(clean);
      if (!again.success)
        throw new EventDataError(
          type,
          `data for ${type} holds a secret in a field that cannot be redacted: ${issues(again.error)}`,
        );
    }

    const seq = this.#events.length;
    const unsealed: UnsealedEvent = {
      id: `evt-${this.runId}-${seq}`,
      runId: this.runId,
      seq,
      ts: (opts.ts ?? new Date()).toISOString(),
      type,
      actor,
      causationId,
      parentRunId: this.parentRunId,
      data: clean,
      prevHash: this.#prevHash,
      schemaVersion: LOG_SCHEMA_VERSION,
    };
    let mac = '';
    const { hash, line } = sealEvent(unsealed, (h) => (mac = this.#key.macEvent(h)));
    this.#write(line);
    this.replica?.append(seq, line);
    // The unsealed object becomes the event: no copy per append (this path runs for every event).
    (unsealed as EventEnvelope).hash = hash;
    (unsealed as EventEnvelope).mac = mac;
    const event = Object.freeze(unsealed as EventEnvelope);
    this.#events.push(event);
    this.#prevHash = hash;
    if (type === 'run.completed') this.#completedSeq = seq;
    // Built from `type` and data checked against that type's schema above.
    return event as EventOf<T>;
  }

  #write(line: string): void {
    const fd = this.#fd!;
    try {
      // One write(2) for the whole line. Regular files do not write short except on a full disk or
      // a signal; then finishing the line beats leaving it torn.
      const buf = Buffer.from(line + '\n', 'utf8');
      const length = buf.length;
      const written = writeSync(fd, buf, 0, length);
      if (written < length) {
        for (let off = written; off < length;) off += writeSync(fd, buf, off, length - off);
      }
      if (this.#fsyncEachAppend) fsyncSync(fd);
    } catch (e) {
      this.#broken = e as Error;
      throw e;
    }
  }

  /** The secret redaction this log applies, for callers that must redact before cutting text. */
  redact(text: string): string {
    return this.#redactor.redact(text);
  }

  /** Make everything appended so far (and every artifact) durable. */
  sync(): void {
    if (this.#fd === undefined) return;
    this.artifacts.sync();
    fsyncSync(this.#fd);
    if (!this.#dirsSynced) {
      fsyncDir(this.runDir);
      fsyncDir(path.dirname(this.runDir));
      this.#dirsSynced = true;
    }
    // After the fsync: a head never records events the disk might not have.
    const n = this.#events.length;
    if (n > this.#headEvents) {
      writeHead(this.#key, this.#head()!);
      this.#headEvents = n;
    }
  }

  #head(): RunHead | undefined {
    if (this.#events.length === 0) return undefined;
    return {
      runId: this.runId,
      firstHash: this.#events[0]!.hash,
      events: this.#events.length,
      hash: this.#prevHash,
      completedSeq: this.#completedSeq,
      keyId: this.#key.id,
      updated: new Date().toISOString(),
    };
  }

  /**
   * sync(), then wait until the replica (if any) holds every event, the run's files and its head.
   * Called where the run must not act before the store has its record; rejects when the store
   * cannot take it or another writer took the run over (then nothing more may be executed).
   */
  async flush(): Promise<void> {
    this.sync();
    await this.replica?.flush({ runDir: this.runDir, head: this.#head() });
  }

  /**
   * The events of this run, read and appended, in order. The array is the log's own (no copy:
   * the state fold reads it every step); treat it as read-only. Envelopes are frozen.
   */
  events(): readonly EventEnvelope[] {
    return this.#events;
  }

  get lastHash(): string {
    return this.#prevHash;
  }

  /** Resolves once the replica holds what `close()` handed it (before another log of the run writes to it). */
  closed(): Promise<void> {
    return this.#closing;
  }

  /** Sync, then release the file. Appending afterwards throws. */
  close(): void {
    if (this.#fd === undefined) return;
    try {
      if (!this.#broken) this.sync();
      // Not awaited (close stays synchronous): the store's owner waits for it (EventStore.close), or `closed()`.
      this.#closing = this.replica?.flush({ runDir: this.runDir, head: this.#head() }) ?? Promise.resolve();
      this.#closing.catch(() => undefined);
    } finally {
      closeSync(this.#fd);
      this.#fd = undefined;
      this.#unlock();
    }
  }
}
