import type { EventEnvelope } from '@gatehouse/shared';
import { currentTask, type PlanState } from './plan-state';
import type { FailureInput } from './plan-types';
import { globPattern } from './task-scope';

/**
 * A command's paths cannot be known before it runs, so a task's `paths` hold commands after: the
 * daemon lists the files an execution changed (a snapshot before and after), and one outside the
 * task's paths fails the task as a deviation the plan did not permit, classified `permission` (a
 * person decides). Nothing outside the approved paths is ever written back (plan/approved-scope.ts).
 */
export function changedOutsideTask(
  plan: PlanState,
  callId: string,
  tool: string,
  events: readonly EventEnvelope[],
): FailureInput | undefined {
  const cur = currentTask(plan);
  const paths = cur?.task.paths;
  if (!cur || !paths) return undefined;
  let changed: readonly string[] = [];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'tool.intent' && e.data.callId === callId) break;
    if (e.type === 'tool.execution.completed' && e.data.callId === callId) {
      changed = e.data.filesChanged;
      break;
    }
  }
  const patterns = paths.map(globPattern);
  const outside = changed.filter((p) => !patterns.some((re) => re.test(p)));
  if (outside.length === 0) return undefined;
  const shown = outside.slice(0, 20).join(', ') + (outside.length > 20 ? ` and ${outside.length - 20} more` : '');
  return {
    kind: 'call',
    tool,
    outcome: 'denied',
    stage: 'plan',
    content:
      `plan_deviation: ${tool} changed ${shown}, outside task ${cur.task.id}'s approved paths ` +
      `(${paths.join(', ')}). Those changes are never written back to the repository.`,
  };
}
