import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { NatsConnection } from 'nats';
import { retryThroughFailover } from '../store/index';
import { handleJob, type JobContext } from './handle-job';
import { DEFAULT_LEASE_TTL_MS } from './lease';
import type { QueueHandles } from './queue-setup';

export interface WorkerOptions {
  nc: NatsConnection;
  queue: QueueHandles;
  store: string;
  cli: string;
  stateDir: string;
  workRoot: string;
  concurrency: number;
  leaseTtlMs?: number;
  /** The Docker engine this worker's runs use (passed to them as DOCKER_HOST); shown by `status`. */
  dockerHost?: string;
  /** Stop after this long with nothing to do (tests, batch jobs); default: run until stopped. */
  exitWhenIdleMs?: number;
  hasEvents: JobContext['hasEvents'];
  log: (line: string) => void;
}

export interface WorkerHandle {
  id: string;
  /** Resolves when the worker has stopped: idle long enough, or stopped. */
  done: Promise<void>;
  /**
   * Stops taking jobs; runs in progress are killed and their leases let go at once, so another
   * worker continues them from their logs (nothing runs twice: the killed child is gone first).
   */
  stop(): Promise<void>;
}

/**
 * `gatehouse worker`: takes jobs off the installation's queue, at most `concurrency` at a time, each
 * run in its own child process under a lease (handle-job.ts), and announces itself in the workers
 * bucket while it lives.
 */
export function startWorker(o: WorkerOptions): WorkerHandle {
  const ttl = o.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const id = `wkr_${os
    .hostname()
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .slice(0, 40)}_${process.pid}_${randomBytes(3).toString('hex')}`;
  const startedAt = new Date().toISOString();
  const running = new Map<string, () => void>();
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  const ctx: JobContext = {
    queue: o.queue,
    holder: { worker: id, host: os.hostname(), since: startedAt },
    leaseTtlMs: ttl,
    cli: o.cli,
    store: o.store,
    stateDir: o.stateDir,
    workRoot: o.workRoot,
    env: { ...process.env, ...(o.dockerHost ? { DOCKER_HOST: o.dockerHost } : {}) },
    hasEvents: o.hasEvents,
    track: (runId, stop) => {
      running.set(runId, stop);
      return () => void running.delete(runId);
    },
    stopping: () => stopping,
    log: o.log,
  };
  const announce = async (): Promise<void> => {
    const record = {
      worker: id,
      host: os.hostname(),
      pid: process.pid,
      ...(o.dockerHost ? { dockerHost: o.dockerHost } : {}),
      concurrency: o.concurrency,
      running: [...running.keys()],
      startedAt,
      seenAt: new Date().toISOString(),
    };
    await o.queue.workers.put(id, JSON.stringify(record)).catch(() => undefined);
  };
  const heartbeat = setInterval(() => void announce(), Math.max(1000, Math.floor(ttl / 3)));

  const loop = async (): Promise<void> => {
    await announce();
    // A worker started while the queue's stream elects a leader waits that out rather than dying.
    const consumer = await retryThroughFailover(() =>
      o.nc.jetstream().consumers.get(o.queue.names.stream, o.queue.names.consumer),
    );
    let idleSince = Date.now();
    let failing = false;
    while (!stopping) {
      if (inFlight.size >= o.concurrency) {
        await Promise.race(inFlight);
        continue;
      }
      const msg = await consumer.next({ expires: 1000 }).then(
        (m) => ((failing = false), m),
        async (e: Error) => {
          // A failover answers at once (no responders, 503): without a pause this loop would spin on it.
          if (!failing) o.log(`taking a job failed (${e.message}); trying again every second`);
          failing = true;
          await new Promise((r) => setTimeout(r, 1000));
          return null;
        },
      );
      if (stopping) {
        msg?.nak();
        break;
      }
      if (!msg) {
        if (inFlight.size > 0) idleSince = Date.now();
        else if (o.exitWhenIdleMs !== undefined && Date.now() - idleSince >= o.exitWhenIdleMs) break;
        continue;
      }
      idleSince = Date.now();
      const p = handleJob(msg, ctx)
        .catch((e: Error) => o.log(`job ${msg.seq}: ${e.message}`))
        .finally(() => {
          inFlight.delete(p);
          idleSince = Date.now();
        });
      inFlight.add(p);
    }
    await Promise.allSettled([...inFlight]);
  };
  const done = loop().finally(async () => {
    clearInterval(heartbeat);
    await o.queue.workers.delete(id).catch(() => undefined);
  });
  return {
    id,
    done,
    stop: async () => {
      stopping = true;
      for (const kill of running.values()) kill();
      await done;
    },
  };
}
