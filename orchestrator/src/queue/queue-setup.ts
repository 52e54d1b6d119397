import {
  AckPolicy,
  DeliverPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type KV,
  type NatsConnection,
  type ObjectStore,
} from 'nats';
import { replicasFor } from '../store/store-setup';
import { DEFAULT_LEASE_TTL_MS } from './lease';
import type { QueueNames } from './names';

export interface QueueHandles {
  names: QueueNames;
  leases: KV;
  workers: KV;
  runs: KV;
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
  const [leases, workers, runs, snapshots] = await Promise.all([
    js.views.kv(names.leases, { ttl, replicas, history: 1 }),
    js.views.kv(names.workers, { ttl: Math.max(ttl, 10_000), replicas, history: 1 }),
    js.views.kv(names.runs, { replicas, history: 1 }),
    js.views.os(names.snapshots, { replicas, storage: StorageType.File }),
  ]);
  return { names, leases, workers, runs, snapshots };
}

async function addOrKeep(jsm: JetStreamManager, names: QueueNames, replicas: number): Promise<void> {
  try {
    await jsm.streams.info(names.stream);
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
    })
    .catch((e: Error) => {
      if (!/stream name already in use/i.test(e.message)) throw e;
    });
}
