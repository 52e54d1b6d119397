import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  newId,
  type Actor,
  type EventDataOf,
  type EventEnvelope,
  type EventOf,
  type EventType,
} from '@gatehouse/shared';
import { LogKey } from '../events/key';
import { Redactor } from '../events/redact';
import { RunLog } from '../events/store';
import type { LogPort } from '../tools/ports';

export interface TestLogOptions {
  runId?: string;
  /** Literal secrets the log redacts (token shapes are always redacted). */
  secrets?: string[];
}

/**
 * A `LogPort` for tests that need no Docker: the real `RunLog` (schemas checked on every append,
 * hash chain, redaction, artifacts) in a temporary directory with a key of its own, so a test never
 * touches the installation's key or state. It also remembers where each `sync` fell, so a test can
 * check what was durable before something happened.
 */
export class TestLog implements LogPort {
  readonly runId: string;
  readonly stateDir: string;
  readonly log: RunLog;
  /** For each `sync()`, how many events the log held then. */
  readonly syncs: number[] = [];

  constructor(opts: TestLogOptions = {}) {
    this.stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-testlog-'));
    this.runId = opts.runId ?? newId('run');
    const key = LogKey.fromBytes(randomBytes(32), {
      keyFile: path.join(this.stateDir, 'log.key'),
      headsDir: path.join(this.stateDir, 'heads'),
    });
    const redactor = opts.secrets ? Redactor.fromEnv({}, opts.secrets) : Redactor.patternsOnly();
    this.log = RunLog.create(this.stateDir, this.runId, { key, redactor });
  }

  get artifacts(): LogPort['artifacts'] {
    return this.log.artifacts;
  }

  append<T extends EventType>(
    type: T,
    actor: Actor,
    data: EventDataOf<T>,
    opts?: { causationId?: string | null },
  ): EventOf<T> {
    return this.log.append(type, actor, data, opts);
  }

  sync(): void {
    this.log.sync();
    this.syncs.push(this.log.events().length);
  }

  redact(text: string): string {
    return this.log.redact(text);
  }

  events(): readonly EventEnvelope[] {
    return this.log.events();
  }

  /** The events of one tool call, in order (those whose data names its call id). */
  eventsOf(callId: string): EventEnvelope[] {
    return this.events().filter((e) => (e.data as { callId?: string }).callId === callId);
  }

  /** Whether the event with this id was on disk by the last sync. */
  isDurable(eventId: string): boolean {
    const seq = this.events().find((e) => e.id === eventId)?.seq;
    return seq !== undefined && (this.syncs.at(-1) ?? 0) > seq;
  }

  /** Closes the log and removes its directory. */
  dispose(): void {
    this.log.close();
    rmSync(this.stateDir, { recursive: true, force: true });
  }
}
