import type { Decision } from './approval-policy';
import type { Mode } from './mode';

/**
 * What plan mode's tools get when no rule names them, in every mode (docs/policy.md, "Plan mode").
 * A plan is the scope of everything that follows, so it is put to a person (or to an approver over
 * NATS) even in sandboxed-auto and read-only: only an explicit rule for submit_plan decides
 * otherwise, per policy. complete_task changes nothing (it ends the current task and is checked
 * like a final answer), so it runs. These are decided by name, whatever side effect a tool's
 * definition declares, so a plan is never allowed as a "read".
 */
const PLAN_TOOL_DEFAULTS: Record<string, Pick<Decision, 'decision' | 'policyId'> & { reason: string }> = {
  submit_plan: {
    decision: 'ask',
    policyId: 'gatehouse:plan-gate',
    reason: 'a plan is approved by a person or by a policy rule for submit_plan, in every mode',
  },
  complete_task: {
    decision: 'allow',
    policyId: 'gatehouse:complete-task',
    reason: 'complete_task changes nothing: it ends the current task, and its summary and check are verified',
  },
};

/** The default decision for a plan tool no rule named, or undefined for any other tool. */
export function planToolDefault(
  tool: string,
  mode: Mode,
): Pick<Decision, 'decision' | 'policyId' | 'reason'> | undefined {
  if (!Object.hasOwn(PLAN_TOOL_DEFAULTS, tool)) return undefined;
  const d = PLAN_TOOL_DEFAULTS[tool] as (typeof PLAN_TOOL_DEFAULTS)[string];
  return { ...d, reason: `${d.reason} (mode ${mode})` };
}
