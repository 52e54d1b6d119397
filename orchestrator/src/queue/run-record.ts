import { canonicalJson } from '@gatehouse/shared';
import type { KV } from 'nats';
import { z } from 'zod';
import type { LogKey } from '../events/key';
import { Snapshot } from './job';

/** Where a submitted run is, as `gatehouse status` shows it. Last writer wins: it is a view, the log is the record. */
export const RunRecord = z
  .object({
    runId: z.string(),
    state: z.enum(['queued', 'running', 'paused', 'completed', 'failed', 'rejected']),
    task: z.string(),
    snapshot: Snapshot.optional(),
    worker: z.string().optional(),
    /** The run's status from its log (final, failed, partial, cancelled) once it completed. */
    status: z.string().optional(),
    reason: z.string().optional(),
    pending: z.array(z.string()).optional(),
    attempts: z.number().int().nonnegative(),
    submittedAt: z.string(),
    updatedAt: z.string(),
  })
  .strict();
export type RunRecord = z.infer<typeof RunRecord>;

/**
 * The runs bucket with the installation's key: every record in it carries a MAC under the key (as
 * jobs do), so whoever can write the bucket but lacks the key cannot make `status` show a state,
 * nor make `submit --resume` sign a job over a snapshot of their choosing.
 */
export interface RunRecords {
  kv: KV;
  key: LogKey;
}

/** A record read back: verified, or why it is not trusted (forged, altered, unsigned, another installation's). */
export type OpenedRecord = { record: RunRecord } | { unverified: string };

/** What a record's MAC covers: its canonical JSON, under a label no job, head or event shares. */
const sealed = (record: RunRecord): string => `gatehouse-queue-run-record\n${canonicalJson(record)}`;

export function sealRunRecord(key: LogKey, record: RunRecord): string {
  return JSON.stringify({ ...record, mac: key.macHead(sealed(record)) });
}

/**
 * A record as stored under `runId`, checked: its fields, its MAC, and that it is the record of the
 * run it is stored under (a genuine record of another run copied over this one is refused too).
 */
export function openRunRecord(key: LogKey, runId: string, text: string): OpenedRecord {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { unverified: 'it is not JSON' };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { unverified: 'it is not a record' };
  const { mac, ...body } = json as Record<string, unknown>;
  const parsed = RunRecord.safeParse(body);
  if (!parsed.success) return { unverified: `it is not a run record (${parsed.error.issues[0]?.message ?? '?'})` };
  if (typeof mac !== 'string')
    return { unverified: "it carries no MAC: it was not written with this installation's key" };
  if (!key.checkHeadMac(sealed(parsed.data), mac))
    return { unverified: "its MAC does not verify with this installation's key (forged, altered, or another's)" };
  if (parsed.data.runId !== runId) return { unverified: `it is the record of ${parsed.data.runId}, not of ${runId}` };
  return { record: parsed.data };
}

/** The run's record: verified, not trusted (with why), or undefined when there is none. */
export async function readRunRecord(runs: RunRecords, runId: string): Promise<OpenedRecord | undefined> {
  const entry = await runs.kv.get(runId);
  if (!entry || entry.operation !== 'PUT') return undefined;
  return openRunRecord(runs.key, runId, entry.string());
}

/**
 * Updates a run's record with what changed (created from `base` when there is none). A record that
 * does not verify is left as it is, never merged into and signed: `status` keeps showing it as not
 * trusted, and the run's log in the store stays the record of what happened.
 */
export async function updateRunRecord(
  runs: RunRecords,
  runId: string,
  change: Partial<RunRecord>,
  base?: Omit<RunRecord, 'updatedAt'>,
): Promise<'written' | 'absent' | 'unverified'> {
  const read = await readRunRecord(runs, runId).catch(() => undefined);
  if (read && 'unverified' in read && !base) return 'unverified';
  const before = read && 'record' in read ? read.record : base;
  if (!before) return 'absent';
  const next: RunRecord = { ...before, ...change, runId, updatedAt: new Date().toISOString() };
  await runs.kv.put(runId, sealRunRecord(runs.key, next));
  return 'written';
}
