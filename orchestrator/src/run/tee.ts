import type { Actor, EventDataOf, EventEnvelope, EventType } from '@gatehouse/shared';
import type { StateTracker } from '../events/state';
import type { RunLog } from '../events/store';
import type { LogPort } from '../tools/ports';

/** The log as the pipeline and loop see it: every append also folds into state and is reported. */
export function tee(
  log: RunLog,
  tracker: StateTracker,
  onEvent?: (e: EventEnvelope) => void,
): LogPort & { events(): readonly EventEnvelope[] } {
  return {
    append<T extends EventType>(type: T, actor: Actor, data: EventDataOf<T>, opts?: { causationId?: string | null }) {
      const event = log.append(type, actor, data, opts);
      tracker.apply(event);
      onEvent?.(event);
      return event;
    },
    sync: () => log.sync(),
    flush: () => log.flush(),
    redact: (text) => log.redact(text),
    artifacts: log.artifacts,
    events: () => log.events(),
  };
}
