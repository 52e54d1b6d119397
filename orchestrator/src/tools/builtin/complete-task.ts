import { z } from 'zod';
import { PlanTaskId } from '@gatehouse/shared';
import { defineTool, semanticError } from '../tool';

/**
 * Plan mode: the model ends the current task. Only the current task can be completed; the plan
 * driver then checks the summary like a final answer (its claims must cite observations) and runs
 * the task's check before the task counts as completed. Nothing runs in the sandbox.
 */
export const completeTask = defineTool({
  name: 'complete_task',
  description:
    'End the current task of the approved plan: its id, and a summary of what was done that cites the ' +
    'observations proving it (e.g. "added the test [obs-4]"). The task\'s check, if it has one, runs next.',
  input: z.strictObject({
    taskId: PlanTaskId,
    summary: z.string().min(1).max(4000).describe('what was done, citing observation ids like [obs-3]'),
  }),
  sideEffect: 'read',
  isReadOnly: () => true,
  validate(input, ctx) {
    const plan = ctx.state.plan;
    if (plan.phase !== 'executing' || plan.current === undefined)
      return Promise.resolve([
        semanticError('taskId', 'no_current_task', 'no task is in progress: submit a plan and wait for its approval'),
      ]);
    if (input.taskId !== plan.current)
      return Promise.resolve([
        semanticError(
          'taskId',
          'not_current_task',
          `${input.taskId} is not the current task; the current task is ${plan.current}`,
        ),
      ]);
    return Promise.resolve([]);
  },
  plan: (input) => ({
    executor: 'orchestrator',
    primitive: 'complete_task',
    input,
    timeoutMs: 5_000,
    run: () =>
      Promise.resolve({
        ok: true,
        output: `task ${input.taskId}: summary received; gatehouse checks it and runs the task's check`,
      }),
  }),
  observe(_input, raw) {
    if (raw.executor !== 'orchestrator')
      return { ok: false, text: 'unexpected result for complete_task', external: false };
    return { ok: raw.result.ok, text: raw.result.output, external: false };
  },
});
