import type { EventEnvelope } from '@gatehouse/shared';
import type { FailureClass } from './plan-types';

/**
 * Retries already made for one class of failure of one task, folded from the log (so a resumed run
 * continues the count instead of starting it again). A person's decision on an escalation of the
 * task starts the count again: "retry" means the recipe's retries are available once more, and
 * each round needs that person again, so retries stay finite.
 */
export function recoveryAttempts(
  events: readonly EventEnvelope[],
  planId: string,
  taskId: string,
  cls: FailureClass,
): number {
  let made = 0;
  for (const e of events) {
    if (e.type === 'recovery.escalated') {
      const d = e.data;
      if (d.planId === planId && d.taskId === taskId && d.status === 'decided') made = 0;
    } else if (e.type === 'recovery.applied') {
      const d = e.data;
      if (d.planId === planId && d.taskId === taskId && d.class === cls && d.outcome === 'retrying') made++;
    }
  }
  return made;
}
