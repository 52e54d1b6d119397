import { z } from 'zod';
import { Id, Sha256Hex } from '../ids';

/**
 * Events of memory across runs (issue 17, orchestrator/src/memory/, docs/memory.md): which records
 * entered a run's context, and which record a run's gated `remember` call stored. The run log is the
 * record of both, so replay rebuilds the context from it and audit sees where a record came from.
 */
const CallId = z.string().min(1).max(128);
const ObservationId = z.string().regex(/^obs-\d+$/);

/** A record as it entered the context or was stored: its id, hash and provenance (the text is in `content`). */
const RecordRef = z.strictObject({
  id: Id,
  scope: z.enum(['repository', 'user']),
  /** SHA-256 of the record's canonical JSON (without its MAC). */
  sha256: Sha256Hex,
  sourceRunId: Id,
  observationIds: z.array(ObservationId),
  createdAt: z.string(),
});

export const MemoryEventData = {
  /** The remembered records that entered the context, and the block the model is shown (verbatim). */
  'memory.recalled': z.strictObject({
    /** The repository identity records were matched against (memory/repository-identity.ts). */
    repository: z.string().max(200),
    records: z.array(RecordRef),
    /** Exactly what the model is shown (context/compile.ts projects it; replay rebuilds from it). */
    content: z.string(),
    estimatedTokens: z.number().int().nonnegative(),
    tokenBudget: z.number().int().nonnegative(),
    /** Left out: records over the budget, and ones refused because their MAC did not verify (by file name). */
    overBudget: z.number().int().nonnegative(),
    tampered: z.array(z.string().max(200)),
  }),
  /** A `remember` call's record was stored (after its citations were verified and the gate allowed it). */
  'memory.stored': z.strictObject({
    callId: CallId,
    record: RecordRef,
    expiresAt: z.string(),
    repository: z.string().max(200).nullable(),
  }),
} as const;
