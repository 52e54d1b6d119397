import { connect, type NatsConnection } from 'nats';
import type { LogKey } from '../events/key';
import { assertRunId } from '../events/paths';
import { EventReplica } from './event-replica';
import { materializeRun, readStoredRun, type StoreContext } from './materialize';
import { parseStoreUrl, runSubject, storeNames, type StoreUrl } from './names';
import { pushRun } from './push-run';
import { RunFiles } from './run-files';
import { RunReplica } from './run-replica';
import { bucketOptions, ensureStream, replicasFor } from './store-setup';
import { StoreUnavailableError } from './store-errors';
import { streamTransport } from './stream-transport';

export { RunFencedError, RunNotStoredError, StoreUnavailableError, StoreUrlError } from './store-errors';
export { chosenStore, parseStoreUrl, type StoreUrl } from './names';
export { EventReplica, type ReplicaTransport } from './event-replica';
export type { RunReplica } from './run-replica';

/**
 * The JetStream event store (docs/event-store.md): one installation's runs on a NATS server, beside
 * the JSONL store every run still writes. Open it, attach `replicaFor(runId)` to a RunLog
 * (RunLogOptions.replica), pull a run into a state directory with `materializeRun`.
 */
export interface EventStore {
  readonly url: string;
  /** The installation (its log key's id) whose runs these are. */
  readonly installation: string;
  /**
   * A replica for a RunLog of this run. `lastStreamSeq`: the stream sequence of the run's last
   * event as this writer knows it (0 for a new run; `materializeRun`'s for a run taken over);
   * left out, it is read from the stream before the first append.
   */
  replicaFor(runId: string, o?: { lastStreamSeq?: number }): RunReplica;
  /** Pull a run (log, files, head) into a state directory, verified; then RunLog.open and every command work on it. */
  materializeRun(stateDir: string, runId: string): Promise<{ events: number; lastStreamSeq: number; files: number }>;
  /** A run's log as JSONL, verified (`gatehouse export`). */
  exportRun(runId: string): Promise<Buffer>;
  /** Sends what was appended to a run's local copy since it was pulled (an answer); how many events went. */
  pushRun(stateDir: string, runId: string): Promise<number>;
  /** The run ids with a head in the store (every run that flushed once). */
  listRuns(): Promise<string[]>;
  /** Waits for every replica's last flush, then closes the connection; rejects with the first replica's failure. */
  close(): Promise<void>;
}

export async function openEventStore(url: string | StoreUrl, key: LogKey): Promise<EventStore> {
  const where = typeof url === 'string' ? parseStoreUrl(url) : url;
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: where.servers,
      name: 'gatehouse-event-store',
      timeout: 5000,
      maxReconnectAttempts: 120,
      reconnectTimeWait: 500,
    });
  } catch (e) {
    throw new StoreUnavailableError(
      `cannot reach the event store at ${where.url}: ${(e as Error).message}. Start a NATS server with ` +
        'JetStream there (or pass another --store / GATEHOUSE_STORE), or leave --store out to keep runs local.',
    );
  }
  try {
    const jsm = await nc.jetstreamManager({ timeout: 10_000 });
    const names = storeNames(key.id);
    const replicas = replicasFor(nc, where.replicas);
    await ensureStream(jsm, names, key.id, replicas);
    const js = nc.jetstream();
    const heads = await js.views.kv(names.heads, { ...bucketOptions(replicas), history: 1 });
    const files = await js.views.os(names.files, bucketOptions(replicas));
    const stream = (await jsm.streams.info(names.stream)).created;
    const ctx: StoreContext = { url: where.url, jsm, names, key, heads, files };
    const transport = streamTransport(js, jsm, names.stream);
    const replicas_: RunReplica[] = [];
    const store: EventStore = {
      url: where.url,
      installation: key.id,
      replicaFor(runId, o = {}) {
        assertRunId(runId); // a run id is one subject token: never a wildcard
        const events = new EventReplica(runId, runSubject(names, runId), transport, o);
        const r = new RunReplica(events, new RunFiles(files, runId), heads, key, stream);
        replicas_.push(r);
        return r;
      },
      materializeRun: (stateDir, runId) => (assertRunId(runId), materializeRun(ctx, stateDir, runId)),
      pushRun(stateDir, runId) {
        assertRunId(runId);
        return pushRun(ctx, (id, o) => store.replicaFor(id, o), stateDir, runId);
      },
      exportRun: async (runId) => (assertRunId(runId), (await readStoredRun(ctx, runId)).jsonl),
      async listRuns() {
        const ids: string[] = [];
        for await (const k of await heads.keys()) ids.push(k);
        return ids.sort();
      },
      async close() {
        const results = await Promise.allSettled(replicas_.map((r) => r.settled()));
        await nc.drain().catch(() => undefined);
        const failed = results.find((r) => r.status === 'rejected');
        if (failed) throw failed.reason;
      },
    };
    return store;
  } catch (e) {
    await nc.close().catch(() => undefined);
    if (e instanceof StoreUnavailableError) throw e;
    throw new StoreUnavailableError(
      `the NATS server at ${where.url} cannot hold the event store: ${(e as Error).message}. ` +
        'It needs JetStream enabled (jetstream {} in its config).',
    );
  }
}
