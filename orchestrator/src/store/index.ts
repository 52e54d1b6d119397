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
import { retryThroughFailover } from './failover-retry';
import { listKeys } from './bounded-reads';

/** How long opening the store is tried through a failover (each request times out at 5 s). */
const SETUP_WITHIN_MS = 20_000;

export { RunFencedError, RunNotStoredError, StoreUnavailableError, StoreUrlError } from './store-errors';
export { chosenStore, parseStoreUrl, type StoreUrl } from './names';
export { EventReplica, type ReplicaTransport } from './event-replica';
export { consumeObject, listKeys, listObjects } from './bounded-reads';
export { retryThroughFailover } from './failover-retry';
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
      // A server that stops answering (frozen, cut off) is left for another within ~15 s, not the
      // default 4 minutes: until then every request through it times out.
      pingInterval: 5000,
      maxPingOut: 3,
    });
  } catch (e) {
    throw new StoreUnavailableError(
      `cannot reach the event store at ${where.url}: ${(e as Error).message}. Start a NATS server with ` +
        'JetStream there (or pass another --store / GATEHOUSE_STORE), or leave --store out to keep runs local.',
    );
  }
  try {
    // The server says in its INFO whether it runs JetStream: one that does not is not waited for.
    if (nc.info?.jetstream !== true) throw new Error('the server does not run JetStream');
    const names = storeNames(key.id);
    const replicas = replicasFor(nc, where.replicas);
    const js = nc.jetstream();
    // Right after a node is lost its streams elect new leaders (a few seconds of timeouts): tried again, bounded.
    const { jsm, heads, files, stream } = await retryThroughFailover(
      async () => {
        const jsm = await nc.jetstreamManager({ timeout: 5000 });
        await ensureStream(jsm, names, key.id, replicas);
        const heads = await js.views.kv(names.heads, { ...bucketOptions(replicas), history: 1 });
        const files = await js.views.os(names.files, bucketOptions(replicas));
        return { jsm, heads, files, stream: (await jsm.streams.info(names.stream)).created };
      },
      100,
      500,
      SETUP_WITHIN_MS,
    );
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
        return (await listKeys(heads)).sort();
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
    const hasJetStream = nc.info?.jetstream === true;
    await nc.close().catch(() => undefined);
    if (e instanceof StoreUnavailableError) throw e;
    const why = (e as Error).message;
    // A timeout, or no responders from a server that has JetStream (its INFO says so), is a cluster
    // without a leader for the store (a node down, an election, no majority); no responders from a
    // server without JetStream is a server to configure.
    if (/timeout|leader|temporarily unavailable/i.test(why) || (hasJetStream && /503/.test(why)))
      throw new StoreUnavailableError(
        `the event store at ${where.url} did not answer in time (${why}, tried for ${SETUP_WITHIN_MS / 1000} s): ` +
          'a node of the cluster may be down or restarting, or too few are up to elect a leader. ' +
          'Try again in a minute; if it persists, check that a majority of the servers is up ' +
          '(nats server report jetstream).',
      );
    throw new StoreUnavailableError(
      `the NATS server at ${where.url} cannot hold the event store: ${why}. ` +
        'It needs JetStream enabled (jetstream {} in its config).',
    );
  }
}
