import type { EventDataOf } from '@gatehouse/shared';

/**
 * What a reply cut off at the output limit gets instead of being taken as the answer. The model
 * sees its cut-off text before this note, and is asked for a whole answer rather than the rest of
 * one: the final answer is read on its own, so a tail that starts mid-sentence would not do.
 */
export function truncatedFeedback(turn: number): EventDataOf<'run.feedback'> {
  return {
    turn,
    kind: 'truncated',
    reason:
      'Your reply was cut off at the output limit before it ended, so it was not taken as your answer. ' +
      'Continue the task. If you were giving your final answer, give the whole answer again, shorter; if you ' +
      'were writing something long, write it in smaller parts.',
  };
}
