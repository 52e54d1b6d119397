import { z } from 'zod';
import { canonicalJson, Id, sha256Hex } from '@gatehouse/shared';

const ObservationId = z.string().regex(/^obs-\d+$/, 'an observation id looks like obs-3');

/** A quote the record rests on, and the observation of the source run it appears in, verbatim. */
export const MemoryCitation = z.strictObject({
  observationId: ObservationId,
  quote: z.string().min(1).max(500),
});
export type MemoryCitation = z.infer<typeof MemoryCitation>;

export const MEMORY_SCOPES = ['repository', 'user'] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

/**
 * One remembered fact (docs/memory.md). It exists only because a run's `remember` call cited
 * observations of that run that hold its quotes verbatim, and the gate allowed it: `source` says
 * which, so a reader can always go back to the log that supports it.
 */
export const MemoryRecord = z.strictObject({
  id: Id,
  text: z.string().min(1).max(1000),
  scope: z.enum(MEMORY_SCOPES),
  /** The repository identity (repository-identity.ts) a repository record belongs to; null for user records. */
  repository: z.string().max(200).nullable(),
  source: z.strictObject({
    runId: Id,
    observationIds: z.array(ObservationId).min(1),
    citations: z.array(MemoryCitation).min(1),
  }),
  confidence: z.enum(['low', 'medium', 'high']),
  createdAt: z.string().datetime({ offset: true }),
  expiresAt: z.string().datetime({ offset: true }),
  /** Its citations were checked against the source run's log when it was stored (never set any other way). */
  verified: z.boolean(),
  /** Who let it through the gate: a policy rule id, or the person's approval (`user:alice via cli`). */
  approvedBy: z.string().max(300),
});
export type MemoryRecord = z.infer<typeof MemoryRecord>;

/** The record's hash: of its canonical JSON, as events name it. */
export function recordSha256(record: MemoryRecord): string {
  return sha256Hex(canonicalJson(record));
}

/** Whether the record has expired at `now`. */
export function isExpired(record: MemoryRecord, now: number = Date.now()): boolean {
  return Date.parse(record.expiresAt) <= now;
}
