import { z } from 'zod';
import { PlanTask } from '@gatehouse/shared';
import { validatePlan } from '../../plan/validate-plan';
import { defineTool, semanticError } from '../tool';
import { runToolsOf } from './plan-tool-names';

export const SubmitPlanInput = z.strictObject({
  tasks: z.array(PlanTask).describe('3-7 concrete tasks, in the order they should run'),
});

/**
 * Plan mode: the model proposes its plan. A plan that fails validation is a rejected observation
 * listing every problem; a valid one goes to the approval gate like any action (the policy decides
 * on submit_plan), and the plan driver reads the gate's answer from the log (plan/plan-gate-answer.ts).
 * Nothing runs in the sandbox.
 */
export const submitPlan = defineTool({
  name: 'submit_plan',
  description:
    'Submit your plan: 3-7 concrete tasks, each with an id (t1…), a title saying exactly what is done, ' +
    'optionally a check (a command whose exit 0 proves the task done), dependsOn (ids of tasks it needs first), ' +
    'tools (the tools it may use) and paths (workspace globs it may touch). The plan is validated and then ' +
    'approved, changed or rejected by a person or policy; only the approved plan is executed, task by task. ' +
    'Submitting a new plan during execution stops it and returns to approval.',
  input: SubmitPlanInput,
  sideEffect: 'write',
  isReadOnly: () => false,
  validate(input, ctx) {
    const checked = validatePlan(input, { tools: runToolsOf(ctx.state.surface) });
    return Promise.resolve(checked.ok ? [] : checked.problems.map((p) => semanticError('tasks', 'invalid_plan', p)));
  },
  plan: (input) => ({
    executor: 'orchestrator',
    primitive: 'submit_plan',
    input,
    timeoutMs: 5_000,
    run: () =>
      Promise.resolve({
        ok: true,
        output: `plan of ${input.tasks.length} tasks accepted by the gate; execution follows the approved plan`,
      }),
  }),
  observe(_input, raw) {
    if (raw.executor !== 'orchestrator')
      return { ok: false, text: 'unexpected result for submit_plan', external: false };
    return { ok: raw.result.ok, text: raw.result.output, external: false };
  },
});
