import { runToolsOf } from '../tools/builtin/plan-tool-names';
import { currentTask, type PlanState } from './plan-state';

/**
 * What an agent may hand a sub-agent in a plan run: never the plan tools (a child cannot submit or
 * end the parent's plan), and during a task no more than the task itself was approved for, its
 * `tools` and its `paths`. A child is held to what it is handed (agents/handoff.ts), so a task's
 * scope cannot be widened by delegating it.
 */
export function taskAgentScope(
  plan: PlanState,
  scope: { surface: readonly string[]; paths: readonly string[] },
): { surface: readonly string[]; paths: readonly string[] } {
  if (!plan.planMode) return scope;
  const surface = runToolsOf(scope.surface);
  const current = currentTask(plan);
  if (!current) return { surface, paths: scope.paths };
  const { tools, paths } = current.task;
  return {
    surface: tools ? surface.filter((t) => tools.includes(t)) : surface,
    paths: paths ?? scope.paths,
  };
}
