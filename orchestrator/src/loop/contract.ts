import type { ObservationRef } from '../events/state';

/** Claims of success, which a failed observation cannot support. */
const SUCCESS = /\b(pass(?:es|ed)?|passing|fixed|works|succeed(?:s|ed)?|verified)\b/i;
/** Words that claim something was done or checked (every success word is one). */
const CLAIM = new RegExp(`${SUCCESS.source}|\\b(ran|run|executed|tested|confirmed)\\b`, 'i');

export type ContractVerdict = { ok: true; cited: string[] } | { ok: false; reason: string };

/**
 * The output contract for a final answer: "the model says it is done" is not enough. Claims of
 * having run, tested, fixed or verified something must cite observations of this run, and
 * success claims must cite at least one observation that succeeded.
 */
export function checkFinalAnswer(answer: string, observations: readonly ObservationRef[]): ContractVerdict {
  const cited = [...new Set(answer.match(/\bobs-\d+\b/g) ?? [])];
  const known = new Map(observations.map((o) => [o.id, o]));
  const missing = cited.filter((id) => !known.has(id));
  if (missing.length > 0) return { ok: false, reason: `it cites ${missing.join(', ')}, which this run does not have` };
  if (!CLAIM.test(answer)) return { ok: true, cited };
  if (cited.length === 0) {
    return {
      ok: false,
      reason: 'it claims work was run, tested or fixed but cites no observation; cite the obs-N that shows it',
    };
  }
  if (SUCCESS.test(answer) && !cited.some((id) => known.get(id)?.outcome === 'ok')) {
    return {
      ok: false,
      reason: `it claims success, but every observation it cites (${cited.join(', ')}) shows a failure or a refusal`,
    };
  }
  return { ok: true, cited };
}
