import type { KV } from 'nats';
import { z } from 'zod';
import { Snapshot } from './job';

/** Where a submitted run is, as `gatehouse status` shows it. Last writer wins: it is a view, the log is the record. */
export const RunRecord = z.object({
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
});
export type RunRecord = z.infer<typeof RunRecord>;

export async function readRunRecord(kv: KV, runId: string): Promise<RunRecord | undefined> {
  const entry = await kv.get(runId);
  if (!entry || entry.operation !== 'PUT') return undefined;
  const parsed = RunRecord.safeParse(JSON.parse(entry.string()));
  return parsed.success ? parsed.data : undefined;
}

/** Updates a run's record with what changed (created from `base` when there is none). */
export async function updateRunRecord(
  kv: KV,
  runId: string,
  change: Partial<RunRecord>,
  base?: Omit<RunRecord, 'updatedAt'>,
): Promise<void> {
  const before = (await readRunRecord(kv, runId).catch(() => undefined)) ?? base;
  if (!before) return;
  const next: RunRecord = { ...before, ...change, updatedAt: new Date().toISOString() };
  await kv.put(runId, JSON.stringify(next));
}
