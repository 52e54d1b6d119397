import type { KV, NatsConnection } from 'nats';
import { listKeys } from '../store/index';
import { LeaseHolder } from './lease';
import type { QueueHandles } from './queue-setup';
import { openRunRecord, type RunRecord } from './run-record';

export interface QueueStatus {
  queue: { pending: number; taken: number };
  workers: Array<Record<string, unknown>>;
  leases: Array<{ runId: string } & LeaseHolder>;
  runs: RunRecord[];
  /** Records in the runs bucket that do not verify with the installation's key: shown, never trusted. */
  unverified: Array<{ runId: string; problem: string }>;
}

/** Everything `gatehouse status` shows, read from the queue's stream and buckets. */
export async function queueStatus(nc: NatsConnection, q: QueueHandles): Promise<QueueStatus> {
  const jsm = await nc.jetstreamManager();
  const info = await jsm.consumers.info(q.names.stream, q.names.consumer);
  const workers: QueueStatus['workers'] = [];
  for (const entry of await entries(q.workers, 'workers')) workers.push(entry.value as Record<string, unknown>);
  const leases: QueueStatus['leases'] = [];
  for (const entry of await entries(q.leases, 'leases')) {
    const holder = LeaseHolder.safeParse(entry.value);
    if (holder.success) leases.push({ runId: entry.key, ...holder.data });
  }
  const runs: RunRecord[] = [];
  const unverified: QueueStatus['unverified'] = [];
  for (const entry of await entries(q.runs.kv, 'runs', false)) {
    const opened = openRunRecord(q.runs.key, entry.key, entry.value as string);
    if ('record' in opened) runs.push(opened.record);
    else unverified.push({ runId: entry.key, problem: opened.unverified });
  }
  runs.sort((a, b) => a.submittedAt.localeCompare(b.submittedAt));
  return { queue: { pending: info.num_pending, taken: info.num_ack_pending }, workers, leases, runs, unverified };
}

/** The bucket's entries, parsed as JSON (entries that are not are skipped) or as their text. */
async function entries(kv: KV, bucket: string, json = true): Promise<Array<{ key: string; value: unknown }>> {
  const out: Array<{ key: string; value: unknown }> = [];
  // Bounded: a bucket's key listing waits forever through a failover in nats.js alone (store/bounded-reads.ts).
  const keys = await listKeys(kv, `the keys of its ${bucket} bucket`);
  for (const key of keys.slice(0, 10_000)) {
    const e = await kv.get(key);
    if (!e || e.operation !== 'PUT') continue;
    try {
      out.push({ key, value: json ? JSON.parse(e.string()) : e.string() });
    } catch {
      // Not ours: skipped.
    }
  }
  return out;
}

/** The status as lines for a person. */
export function statusLines(s: QueueStatus): string[] {
  const lines = [`queue: ${s.queue.pending} waiting, ${s.queue.taken} taken by workers`];
  lines.push(`workers (${s.workers.length}):`);
  for (const w of s.workers) {
    const text = (k: string): string => (typeof w[k] === 'string' || typeof w[k] === 'number' ? String(w[k]) : '?');
    const running = Array.isArray(w.running) ? w.running.length : 0;
    const docker = typeof w.dockerHost === 'string' ? ` (docker ${w.dockerHost})` : '';
    const load = `${running}/${text('concurrency')} running`;
    lines.push(`  ${text('worker')} on ${text('host')}${docker}: ${load}, seen ${text('seenAt')}`);
  }
  lines.push(`leases (${s.leases.length}):`);
  for (const l of s.leases) lines.push(`  ${l.runId} held by ${l.worker} since ${l.since}`);
  lines.push(`runs (${s.runs.length}):`);
  for (const r of s.runs)
    lines.push(
      `  ${r.runId} ${r.state}${r.status ? ` (${r.status})` : ''}${r.worker ? ` on ${r.worker}` : ''}: ` +
        `${r.task.slice(0, 60)}${r.pending?.length ? ` - waiting for ${r.pending.join(', ')}` : ''}`,
    );
  if (s.unverified.length) {
    lines.push(
      `records that do not verify (${s.unverified.length}), not trusted: the run's log in the store says where it is:`,
    );
    for (const u of s.unverified) lines.push(`  ${u.runId} NOT TRUSTED: ${u.problem}`);
  }
  return lines;
}
