import type { EventEnvelope, EventType } from '@gatehouse/shared';

/** A text reply of the model's, as the loop decides on it. */
export interface TextReply {
  turn: number;
  text: string;
  stopReason: string;
}

/**
 * What a resume or a replaced sandbox records before the loop goes on (and what a sandbox's proxy
 * logs at any time): none of it acts on the model's last reply. Any other event after the reply
 * (feedback, the check's calls and verdict, a new request, the run's end) means it was acted on.
 */
const SAYS_NOTHING_OF_THE_REPLY: ReadonlySet<EventType> = new Set<EventType>([
  'run.resumed',
  'workspace.checkpoint',
  'sandbox.started',
  'sandbox.lost',
  'egress.allowed',
  'egress.denied',
  'setup.started',
  'setup.command',
  'setup.completed',
  'preflight.completed',
  'mcp.resumed',
  'memory.recalled',
]);

export function saysNothingOfTheReply(type: EventType): boolean {
  return SAYS_NOTHING_OF_THE_REPLY.has(type);
}

/**
 * The model's last reply, when it was text (no tool calls, no error) and the run stopped before
 * anything came of it: its worker was killed between the model's answer and the run's end. The
 * resumed loop decides on it as it would have, instead of asking the model again (a scripted model
 * has no turn left for that; a real one would be paid twice and could answer differently).
 */
export function undecidedReply(events: readonly EventEnvelope[]): TextReply | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type !== 'model.output') {
      if (!saysNothingOfTheReply(e.type)) return undefined;
      continue;
    }
    const out = e.data;
    if (out.toolCalls.length > 0 || out.error) return undefined;
    return { turn: out.turn, text: out.text, stopReason: out.stopReason };
  }
  return undefined;
}
