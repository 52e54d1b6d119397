import type { EventDataOf, EventOf } from '@gatehouse/shared';
import type { LogPort } from '../ports';
import type { PipelineDeps } from './types';

/** Appends one event and folds it into the run state at once, so the next step sees it. */
export function record<T extends Parameters<LogPort['append']>[0]>(
  deps: Pick<PipelineDeps, 'log' | 'tracker'>,
  type: T,
  actor: Parameters<LogPort['append']>[1],
  data: EventDataOf<T>,
  causationId: string | null = null,
): EventOf<T> {
  const event = deps.log.append(type, actor, data, { causationId });
  deps.tracker.apply(event);
  return event;
}
