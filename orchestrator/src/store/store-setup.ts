import type { JetStreamManager, NatsConnection } from 'nats';
import { StorageType } from 'nats';
import type { StoreNames } from './names';
import { StoreUnavailableError } from './store-errors';

/** Long enough for a writer to retry through a node's failover and a reconnect: ids seen in it are stored once. */
export const DUPLICATE_WINDOW_NS = 10 * 60 * 1_000_000_000;
const OURS = (installation: string): string => `gatehouse event store of installation ${installation}`;

/** How many copies: what the URL asks, else min(3, cluster size) (1 on a server without a cluster). */
export function replicasFor(nc: NatsConnection, asked: number | undefined): number {
  const clustered = Boolean(nc.info?.cluster);
  if (!clustered) return 1;
  return asked ?? 3;
}

/**
 * The installation's stream: file storage, delete and purge denied (the log is evidence), a long
 * duplicate window. One that exists is used only when it denies delete and purge; one of ours that
 * does not (made by an older gatehouse or edited) is fixed, anyone else's is refused.
 */
export async function ensureStream(
  jsm: JetStreamManager,
  names: StoreNames,
  installation: string,
  replicas: number,
): Promise<void> {
  const config = {
    name: names.stream,
    description: OURS(installation),
    subjects: [`${names.subjects}.>`],
    storage: StorageType.File,
    num_replicas: replicas,
    deny_delete: true,
    deny_purge: true,
    allow_rollup_hdrs: false,
    duplicate_window: DUPLICATE_WINDOW_NS,
  };
  let info;
  try {
    info = await jsm.streams.info(names.stream);
  } catch (e) {
    if (!/stream not found/i.test((e as Error).message)) throw e;
    try {
      await jsm.streams.add(config);
      return;
    } catch (err) {
      throw new StoreUnavailableError(
        `cannot create the event stream ${names.stream} with ${replicas} replica(s): ${(err as Error).message}. ` +
          'On a cluster smaller than 3 nodes add ?replicas=N to the --store URL.',
      );
    }
  }
  const c = info.config;
  if (c.deny_delete && c.deny_purge && !c.allow_rollup_hdrs) return;
  if (c.description !== OURS(installation))
    throw new StoreUnavailableError(
      `the stream ${names.stream} on this server was not made by gatehouse and allows deleting or purging ` +
        'events, so it cannot hold an evidence log. Remove or rename it, or use another NATS server.',
    );
  await jsm.streams.update(names.stream, { ...c, deny_delete: true, deny_purge: true, allow_rollup_hdrs: false });
}

/** A KV bucket or object store's settings: file storage, the same replicas. */
export const bucketOptions = (replicas: number) => ({ replicas, storage: StorageType.File });
