import type { NatsConnection } from 'nats';
import { eventHash } from '../events/hash';
import type { LogKey } from '../events/key';
import { listKeys, listObjects } from '../store/index';
import { runSubject, storeNames } from '../store/names';
import { planPrune, type PrunePlan } from './prune-plan';
import type { QueueHandles } from './queue-setup';
import { openRunRecord, type OpenedRecord } from './run-record';

export interface PruneOptions {
  olderThanMs: number;
  dryRun?: boolean;
  now?: number;
}

/**
 * `gatehouse queue prune`: reads the runs bucket, the snapshots and, for each run whose record
 * says completed, the last event of its log in the store; removes what `planPrune` says (snapshots
 * first, then records, so a record never names a snapshot that is gone while it is still wanted).
 */
export async function pruneQueue(
  nc: NatsConnection,
  q: QueueHandles,
  installation: string,
  o: PruneOptions,
): Promise<PrunePlan> {
  const records: Array<{ runId: string; opened: OpenedRecord }> = [];
  const keys = await listKeys(q.runs.kv);
  for (const runId of keys) {
    const e = await q.runs.kv.get(runId);
    if (e?.operation === 'PUT') records.push({ runId, opened: openRunRecord(q.runs.key, runId, e.string()) });
  }
  const snapshots = (await listObjects(q.snapshots))
    .filter((s) => !s.deleted)
    .map((s) => ({ name: s.name, mtime: s.mtime }));
  const completedInStore = new Set<string>();
  for (const { runId, opened } of records)
    if ('record' in opened && opened.record.state === 'completed')
      if (await endsCompleted(nc, installation, q.runs.key, runId)) completedInStore.add(runId);
  const plan = planPrune({
    now: o.now ?? Date.now(),
    olderThanMs: o.olderThanMs,
    records,
    snapshots,
    completedInStore,
  });
  if (o.dryRun) return plan;
  const jsm = await nc.jetstreamManager();
  for (const s of plan.snapshots) {
    await q.snapshots.delete(s.name);
    // The delete leaves a "deleted" info message per object: one per run ever submitted, unless purged.
    const meta = `$O.${q.names.snapshots}.M.${base64UrlPadded(s.name)}`;
    await jsm.streams.purge(`OBJ_${q.names.snapshots}`, { filter: meta });
  }
  for (const r of plan.records) await q.runs.kv.purge(r.runId);
  // Purge markers older than the client's default (30 minutes) go too: the bucket does not grow with
  // them. nats.js has it on its bucket but not on the KV interface.
  await (q.runs.kv as unknown as { purgeDeletes(): Promise<unknown> }).purgeDeletes();
  return plan;
}

/** The object store's encoding of an object name in its meta subject (nats.js Base64UrlPaddedCodec). */
function base64UrlPadded(name: string): string {
  const b = Buffer.from(name, 'utf8').toString('base64url');
  return b + '='.repeat((4 - (b.length % 4)) % 4);
}

/** Whether the run's log in the event store ends in a `run.completed` event whose hash and MAC verify. */
async function endsCompleted(nc: NatsConnection, installation: string, key: LogKey, runId: string): Promise<boolean> {
  const names = storeNames(installation);
  const jsm = await nc.jetstreamManager();
  try {
    const m = await jsm.streams.getMessage(names.stream, { last_by_subj: runSubject(names, runId) });
    const event = JSON.parse(new TextDecoder().decode(m.data)) as Record<string, unknown> & { hash?: unknown };
    if (event.type !== 'run.completed' || event.runId !== runId || typeof event.mac !== 'string') return false;
    const hash = eventHash(event as never);
    return hash === event.hash && key.checkEventMac(hash, event.mac) === 'ok';
  } catch {
    // No stream, no event, not JSON: not known to have completed, so its snapshot is kept.
    return false;
  }
}
