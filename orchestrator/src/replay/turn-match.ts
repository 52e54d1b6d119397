import { canonicalJson } from '@gatehouse/shared';

/** A model's reply as a replay compares it. */
export interface ReplyFacts {
  text: string;
  calls: Array<{ name: string; input: unknown }>;
  /** The reply did not end (output limit, provider filter): never an answer. */
  cutOff: boolean;
}

/**
 * Whether a new model's reply matches the recorded one, and if not, why. A match means the same
 * actions: the same tool calls, in the same order, each with the same name and the same input as
 * canonical JSON (key order and whitespace do not count; call ids differ between models and are
 * ignored). The text around the calls is not compared: it is not an action. A reply with no calls is
 * an answer; an answer where the recorded run also answered is a match, whatever it says.
 */
export function turnMismatch(recorded: ReplyFacts, replayed: ReplyFacts): string | undefined {
  const answered = (r: ReplyFacts) => r.calls.length === 0 && !r.cutOff;
  if (answered(recorded) && answered(replayed)) return undefined;
  // Both cut off before a call: the run sent the same note back either way.
  if (recorded.calls.length + replayed.calls.length === 0 && recorded.cutOff && replayed.cutOff) return undefined;
  if (answered(recorded)) return `the recorded model answered; the new one ${describe(replayed)}`;
  if (answered(replayed)) return `the new model answered; the recorded one ${describe(recorded)}`;
  if (recorded.calls.length === 0 || replayed.calls.length === 0) {
    return `the recorded model ${describe(recorded)}; the new one ${describe(replayed)}`;
  }
  const n = Math.max(recorded.calls.length, replayed.calls.length);
  for (let i = 0; i < n; i++) {
    const a = recorded.calls[i];
    const b = replayed.calls[i];
    if (!a || !b) {
      return `the recorded model made ${recorded.calls.length} call(s), the new one ${replayed.calls.length}`;
    }
    if (a.name !== b.name) return `call ${i + 1}: the recorded model called ${a.name}, the new one ${b.name}`;
    if (canonical(a.input) !== canonical(b.input)) return `call ${i + 1} (${a.name}): the input differs`;
  }
  return undefined;
}

function describe(r: ReplyFacts): string {
  if (r.calls.length > 0) return `called ${r.calls.map((c) => c.name).join(', ')}`;
  return r.cutOff ? 'was cut off before it ended' : 'answered';
}

/** Canonical JSON, or the raw text for input that is not JSON-able (a call whose arguments did not parse). */
function canonical(input: unknown): string {
  try {
    return canonicalJson(input ?? null);
  } catch {
    return String(input);
  }
}
