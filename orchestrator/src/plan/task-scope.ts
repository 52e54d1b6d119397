import type { ValidationError } from '@gatehouse/shared';
import type { PlanScopedCall } from '../tools/pipeline/types';
import { normalisePathPattern, pathPattern } from '../policy/rules';
import { PLAN_TOOLS } from '../tools/builtin/plan-tool-names';
import { currentTask, type PlanState } from './plan-state';

/**
 * An approved plan is an approved scope: a call outside it is refused at validation stage `plan`,
 * as a deviation, before the policy is asked. While no plan is approved only reads are allowed;
 * during a task, only the task's `tools`, and changes only inside its `paths` (workspace globs,
 * matched against where the call's paths resolve). Reads are not held to `paths`: "paths" are
 * what a task may touch, and looking elsewhere changes nothing. gatehouse's own calls (a task's
 * check) and the plan tools themselves are never deviations.
 */
export function taskScopeErrors(plan: PlanState, call: PlanScopedCall): ValidationError[] {
  if (call.actor === 'runtime' || PLAN_TOOLS.includes(call.tool)) return [];
  const revise = 'If the plan is wrong, submit a new plan with submit_plan (it goes back to approval).';
  const current = currentTask(plan);
  if (!current) {
    if (call.readOnly) return [];
    const why =
      plan.phase === 'executing'
        ? 'no task of the plan is in progress'
        : 'no plan is approved yet: explore with read-only tools, then submit a plan with submit_plan';
    return [deviation('tool', `${call.tool} would change the workspace, but ${why}.`)];
  }
  const { task, index, total } = current;
  const label = `task ${task.id} [${index}/${total}] "${task.title}"`;
  if (task.tools && !task.tools.includes(call.tool))
    return [
      deviation(
        'tool',
        `deviation from the approved plan: ${label} may use only ${task.tools.join(', ')}; ` +
          `${call.tool} is outside it. ${revise}`,
      ),
    ];
  if (task.paths && !call.readOnly) {
    const patterns = task.paths.map(globPattern);
    const outside = call.paths.filter((p) => !patterns.some((re) => re.test(p)));
    if (outside.length > 0)
      return [
        deviation(
          'path',
          `deviation from the approved plan: ${label} may change only ${task.paths.join(', ')}; ` +
            `${outside.join(', ')} is outside it. ${revise}`,
        ),
      ];
  }
  return [];
}

function deviation(path: string, message: string): ValidationError {
  return { path, code: 'plan_deviation', message };
}

/** A workspace glob matched the way the policy matches paths (policy/rules.ts): one reading of a glob everywhere. */
export function globPattern(glob: string): RegExp {
  return pathPattern(normalisePathPattern(glob));
}
