import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type KV,
  type NatsConnection,
  type ObjectStore,
} from 'nats';
import type { LogKey } from '../events/key';
import { replicasFor } from '../store/store-setup';
import { DEFAULT_LEASE_TTL_MS } from './lease';
import type { QueueNames } from './names';
import type { RunRecords } from './run-record';

export interface QueueHandles {
  names: QueueNames;
  leases: KV;
  workers: KV;
  runs: RunRecords;
  snapshots: ObjectStore;
}

export interface QueueSetupOptions {
  /** Copies of every stream and bucket: default 3 on a cluster, 1 on a single server. */
  replicas?: number;
  leaseTtlMs?: number;
}

/** How long a taken job may go without a sign of life before JetStream hands it to another worker. */
export function ackWaitMs(leaseTtlMs: number): number {
  return leaseTtlMs;
}

/**
 * Makes (or finds) the installation's queue: a work-queue stream whose messages leave once a
 * worker acknowledges them, one durable pull consumer all workers share (a message goes to one
 * worker at a time and comes back when its worker stops showing life), and the buckets for leases,
 * workers, run states and repository snapshots. Idempotent: every worker and submitter calls it.
 */
export async function ensureQueue(
  nc: NatsConnection,
  names: QueueNames,
  key: LogKey,
  opts: QueueSetupOptions = {},
): Promise<QueueHandles> {
  const jsm = await nc.jetstreamManager();
  const replicas = replicasFor(nc, opts.replicas);
  const ttl = opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  await addOrKeep(jsm, names, replicas);
  const ns = 1_000_000;
  await jsm.consumers
    .add(names.stream, {
      durable_name: names.consumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ackWaitMs(ttl) * ns,
      max_ack_pending: 10_000,
    })
    .catch((e: Error) => {
      // Made by another worker with another lease TTL: JetStream refuses to change it; use it as it is.
      if (!/consumer already exists|consumer name already in use/i.test(e.message)) throw e;
    });
  const js = nc.jetstream();
  const [leases, workers, runsKv, snapshots] = await Promise.all([
    js.views.kv(names.leases, { ttl, replicas, history: 1 }),
    js.views.kv(names.workers, { ttl: Math.max(ttl, 10_000), replicas, history: 1 }),
    // A record is small (its task and reason are cut short): a bigger value is no record of ours.
    js.views.kv(names.runs, { replicas, history: 1, maxValueSize: 64 * 1024 }),
    js.views.os(names.snapshots, { replicas, storage: StorageType.File }),
  ]);
  return { names, leases, workers, runs: { kv: runsKv, key }, snapshots };
}

/**
 * Bounds on the job stream. A job leaves when a worker acknowledges or terminates it, so only jobs
 * no worker has taken stay; these bound them when no worker runs for a long time. A full queue
 * refuses the next submit (discard new) rather than dropping a queued run without a word. A job
 * is small (a task, a policy, a config, a scripted model's turns), whatever the repository's size.
 * JetStream reserves `max_bytes` of the server's file store for the stream, so it is kept modest.
 */
export const QUEUE_LIMITS = {
  max_msgs: 10_000,
  max_bytes: 128 * 1024 * 1024,
  max_msg_size: 8 * 1024 * 1024,
  discard: DiscardPolicy.New,
} as const;

async function addOrKeep(jsm: JetStreamManager, names: QueueNames, replicas: number): Promise<void> {
  try {
    const info = await jsm.streams.info(names.stream);
    // A stream made before the bounds existed gets them (JetStream lets these change in place).
    const c = info.config;
    if (
      c.max_msgs !== QUEUE_LIMITS.max_msgs ||
      c.max_bytes !== QUEUE_LIMITS.max_bytes ||
      c.max_msg_size !== QUEUE_LIMITS.max_msg_size ||
      c.discard !== QUEUE_LIMITS.discard
    )
      await jsm.streams.update(names.stream, { ...c, ...QUEUE_LIMITS });
    return;
  } catch (e) {
    if (!/stream not found/i.test((e as Error).message)) throw e;
  }
  await jsm.streams
    .add({
      name: names.stream,
      subjects: [names.subject],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: replicas,
      // A submit sent twice (a retry after a lost ack) is one job: its message id is the run id.
      duplicate_window: 10 * 60 * 1_000_000_000,
      ...QUEUE_LIMITS,
    })
    .catch((e: Error) => {
      if (!/stream name already in use/i.test(e.message)) throw e;
    });
}
