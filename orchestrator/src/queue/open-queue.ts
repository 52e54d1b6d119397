import { connect, type NatsConnection } from 'nats';
import { GatehouseError } from '../errors';
import { LogKey } from '../events/key';
import type { StoreUrl } from '../store/index';
import { queueNames } from './names';
import { ensureQueue, type QueueHandles, type QueueSetupOptions } from './queue-setup';

/** The queue's NATS server cannot be reached or used: nothing was queued or taken. */
export class QueueUnavailableError extends GatehouseError {
  readonly kind = 'environment';
}

/**
 * Connects to the store's NATS server and makes (or finds) this installation's queue. The
 * installation is the log key's (GATEHOUSE_KEY_FILE): every worker and submitter of one team holds
 * the same key, so they share a queue and can verify each other's logs.
 */
export async function openQueue(
  where: StoreUrl,
  opts: QueueSetupOptions & { name?: string } = {},
): Promise<{ nc: NatsConnection; queue: QueueHandles; installation: string }> {
  const key = LogKey.load({});
  const installation = key.id;
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: where.servers,
      name: opts.name ?? 'gatehouse',
      timeout: 5000,
      maxReconnectAttempts: -1,
    });
  } catch (e) {
    throw new QueueUnavailableError(
      `cannot reach the store's NATS server at ${where.url} (${(e as Error).message}); ` +
        'start it, or fix --store / GATEHOUSE_STORE',
    );
  }
  try {
    const replicas = opts.replicas ?? where.replicas;
    const queue = await ensureQueue(nc, queueNames(installation), key, { ...opts, ...(replicas ? { replicas } : {}) });
    return { nc, queue, installation };
  } catch (e) {
    await nc.close().catch(() => undefined);
    throw new QueueUnavailableError(
      `the NATS server at ${where.url} has no usable JetStream for the queue (${(e as Error).message}); ` +
        'run nats-server with JetStream enabled (-js)',
    );
  }
}
