import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NatsConnection } from 'nats';
import { ensureImages, LogKey, openEventStore, type EventStore, type RunLog } from '@gatehouse/orchestrator';
import { connectWithin, startNatsCluster, type NatsCluster } from './nats-cluster';

/** The temporary folders a test file makes, removed together at its end. */
export class TempDirs {
  readonly #dirs: string[] = [];

  make(prefix: string): string {
    const d = mkdtempSync(path.join(os.tmpdir(), prefix));
    this.#dirs.push(d);
    return d;
  }

  /** A key of the test's own (never the installation's), with its heads in their own folder. */
  key(prefix = 'gh-store-key-'): LogKey {
    const d = this.make(prefix);
    return LogKey.fromBytes(randomBytes(32), { keyFile: path.join(d, 'log.key'), headsDir: path.join(d, 'heads') });
  }

  remove(): void {
    for (const d of this.#dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  }
}

/**
 * The event store's tests' bench: one JetStream server (gatehouse's NATS image), a connection to
 * it, the stores opened on it and the folders made meanwhile; `stop()` closes and removes them all.
 */
export class StoreTestbed {
  readonly dirs = new TempDirs();
  readonly #stores: EventStore[] = [];

  private constructor(
    readonly server: NatsCluster,
    readonly url: string,
    readonly nc: NatsConnection,
  ) {}

  static async start(): Promise<StoreTestbed> {
    const images = await ensureImages({ prune: false });
    const server = await startNatsCluster(images.nats, 1);
    const url = server.servers[0]!;
    return new StoreTestbed(server, url, await connectWithin(url, 20_000));
  }

  /** The event store on this server under `key`, closed by `stop()`. */
  async open(key: LogKey): Promise<EventStore> {
    const s = await openEventStore(this.url, key);
    this.#stores.push(s);
    return s;
  }

  async stop(): Promise<void> {
    for (const s of this.#stores) await s.close().catch(() => undefined);
    await this.nc.close().catch(() => undefined);
    await this.server.stop();
    this.dirs.remove();
  }
}

export function appendStarted(log: RunLog, task: string): void {
  log.append('run.started', 'user', { task, mode: 'confirm-each', surface: ['bash'] });
}

/** Turn `n`'s model output: no tool calls, a token each way. */
export function appendOutput(log: RunLog, n: number): void {
  log.append('model.output', 'model', {
    turn: n,
    text: `turn ${n}`,
    toolCalls: [],
    stopReason: 'end_turn',
    usage: { inputTokens: 1, outputTokens: 1 },
    retries: 0,
  });
}
