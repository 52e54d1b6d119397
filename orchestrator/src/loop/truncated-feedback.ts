import type { EventDataOf } from '@gatehouse/shared';

/**
 * What a reply cut off at the output limit gets instead of being taken as the answer. The model
 * sees its cut-off text before this note, and is asked for a whole answer rather than the rest of
 * one: the final answer is read on its own, so a tail that starts mid-sentence would not do.
 */
/**
 * What a reply the provider stopped itself (a content filter, a refusal) gets: it may end anywhere,
 * so it is not an answer either; the model is told and may try again within the budgets.
 */
export function filteredFeedback(turn: number): EventDataOf<'run.feedback'> {
  return {
    turn,
    kind: 'filtered',
    reason:
      'Your reply was stopped by the provider (a content filter or a refusal) before it ended, so it was not ' +
      'taken as your answer. Continue the task, and give your whole final answer when you are done.',
  };
}

/** An empty reply with no tool calls says nothing: it is not an answer. */
export function emptyAnswerFeedback(turn: number): EventDataOf<'run.feedback'> {
  return {
    turn,
    kind: 'contract',
    reason: 'Your reply was empty: it called no tool and gave no answer. Continue the task, or give your final answer.',
  };
}

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
