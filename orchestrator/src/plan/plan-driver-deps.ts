import type { EventEnvelope } from '@gatehouse/shared';
import type { StateTracker } from '../events/state';
import type { LoopOutcome } from '../loop/loop';
import type { ToolPipeline } from '../tools/pipeline';
import type { LogPort } from '../tools/ports';
import type { RecoveryDeps } from './recovery-deps';

/** What the plan driver's parts share: the run's log and state, the pipeline, and recovery's needs. */
export interface PlanDriverDeps {
  log: LogPort & { events(): readonly EventEnvelope[] };
  tracker: StateTracker;
  pipeline: Pick<ToolPipeline, 'run' | 'continueCall'>;
  recovery: RecoveryDeps;
  /** Asked of gatehouse's runs of a task's check (ms). */
  checkTimeoutMs: number;
}

export function pausedOn(requestId: string): LoopOutcome {
  return { status: 'paused', stopReason: 'awaiting_approval', pending: requestId ? [requestId] : [] };
}

/** One event of the log by its id (an answer, a decision the state points to). */
export function eventById(events: readonly EventEnvelope[], id: string | undefined): EventEnvelope | undefined {
  if (id === undefined) return undefined;
  for (let i = events.length - 1; i >= 0; i--) if (events[i]!.id === id) return events[i];
  return undefined;
}
