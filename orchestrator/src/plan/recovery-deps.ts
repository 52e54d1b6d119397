import type { EventEnvelope } from '@gatehouse/shared';
import type { ApprovalChannel } from '../approval/channels/types';
import type { StateTracker } from '../events/state';
import type { LogPort } from '../tools/ports';
import type { ToolPipeline } from '../tools/pipeline';
import type { Classified, FailureInput, RecoveryRecipes } from './plan-types';

/** What recovery needs from the run; the plan driver builds it from its own pipeline deps. */
export interface RecoveryDeps {
  /** The run's log; recovery folds its attempts and answers from it, so a resumed run goes on counting. */
  log: LogPort & { events(): readonly EventEnvelope[] };
  tracker: StateTracker;
  /** A transient call is run again through the same gates as any call (validate, policy, approval). */
  pipeline: Pick<ToolPipeline, 'run'>;
  /** Where an escalation is put to a person; without one nobody can answer and it counts as abort. */
  channel?: ApprovalChannel;
  lineage?: readonly string[];
  recipes: RecoveryRecipes;
  /** Default: plan/classify-failure.ts's classifyFailure. */
  classify?: (failure: FailureInput) => Classified;
  /** Waits out a backoff; rejects when the signal fires. Tests inject one that records the delays. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}
