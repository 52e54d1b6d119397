import type { EventDataOf } from '@gatehouse/shared';

export type RunStatus = EventDataOf<'run.completed'>['status'];

export interface LoopOutcome {
  /** `paused`: waiting for approvals; the run is not over (`gatehouse resume` continues it). */
  status: RunStatus | 'paused';
  stopReason: string;
  answer?: string;
  /** Approval requests the run waits for (status `paused`). */
  pending?: string[];
  /** Which rule decided the status, when one did (`run.completed` data.decidedBy). */
  decidedBy?: string;
}
