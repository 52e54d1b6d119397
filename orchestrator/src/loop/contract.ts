import type { EventEnvelope } from '@gatehouse/shared';
import { evidenceFrom } from './evidence';
import { judgeClaims, type JudgedClaim } from './judge-claims';

export type ContractVerdict =
  { ok: true; claims: JudgedClaim[] } | { ok: false; reason: string; claims: JudgedClaim[] };

/**
 * The output contract for a final answer: "the model says it is done" is not enough. Each claim is
 * judged against the observations it cites, as the run's log records them (judge-claims.ts).
 */
export function checkFinalAnswer(answer: string, events: readonly EventEnvelope[]): ContractVerdict {
  const judged = judgeClaims(answer, evidenceFrom(events));
  if (judged.supported) return { ok: true, claims: judged.claims };
  return {
    ok: false,
    reason: judged.reason ?? 'its claims are not supported by the observations cited',
    claims: judged.claims,
  };
}
