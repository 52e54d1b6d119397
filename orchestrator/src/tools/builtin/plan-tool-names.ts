/** The tools only plan runs see (`gatehouse plan`): they submit the plan and end its tasks. */
export const PLAN_TOOLS: readonly string[] = ['submit_plan', 'complete_task'];

/** The tools a plan's tasks may name: the run's own, not the plan mode's. */
export function runToolsOf(surface: readonly string[]): string[] {
  return surface.filter((t) => !PLAN_TOOLS.includes(t));
}
