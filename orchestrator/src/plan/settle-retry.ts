import type { EventEnvelope, EventOf } from '@gatehouse/shared';
import { record } from '../tools/pipeline/record';
import type { RecoveryDeps } from './recovery-deps';

/**
 * The retry of a task that the model carries out (a feedback recipe, or a retry with no call to
 * repeat: a failed check or summary) and whose outcome is not on record yet: the task's last
 * `recovery.applied` is `retrying`, and the task was not started again since. A retry gatehouse
 * runs itself records its own outcome (recover.ts).
 */
export function openRetry(
  events: readonly EventEnvelope[],
  planId: string,
  taskId: string,
): EventOf<'recovery.applied'> | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'task.started' && e.data.planId === planId && e.data.taskId === taskId) return undefined;
    if (e.type !== 'recovery.applied' || e.data.planId !== planId || e.data.taskId !== taskId) continue;
    return e.data.outcome === 'retrying' ? e : undefined;
  }
  return undefined;
}

/**
 * Puts the outcome of the task's open retry on record: `succeeded` when the task then completed,
 * `failed` when it failed again (before that failure is classified). Without it a retry the model
 * made would stay "retrying" in the log forever, and the log would not say whether recovery worked.
 */
export function settleRetry(
  deps: Pick<RecoveryDeps, 'log' | 'tracker'>,
  planId: string,
  taskId: string,
  outcome: 'succeeded' | 'failed',
): void {
  const open = openRetry(deps.log.events(), planId, taskId);
  if (!open) return;
  const { delayMs: _wait, outcome: _retrying, ...applied } = open.data;
  record(deps, 'recovery.applied', 'runtime', { ...applied, outcome }, open.id);
  deps.log.sync();
}
