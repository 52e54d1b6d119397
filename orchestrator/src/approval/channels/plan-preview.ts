import { z } from 'zod';
import { FailureClass, PlanTaskId } from '@gatehouse/shared';
import { planTasksOf } from '../plan-answer';

/**
 * What an approver reads about a plan (`submit_plan`): every task in order with its id, title,
 * check, dependencies, tools and paths; and about an escalation: the task, the failure's class and
 * why. Undefined when the input is not one (the caller shows it as JSON). Every field from the
 * model is kept on one line (a newline in a title must not pass for another task); control
 * characters are escaped where it is shown (screen.ts).
 */
export function planPreviewOf(tool: string, input: unknown): string | undefined {
  if (tool === 'submit_plan') return planPreview(input);
  if (tool === 'escalation') return escalationPreview(input);
  return undefined;
}

function planPreview(input: unknown): string | undefined {
  const tasks = planTasksOf(input);
  if (!tasks) return undefined;
  const lines = [`plan: ${tasks.length} task${tasks.length === 1 ? '' : 's'}, run in this order`];
  tasks.forEach((t, i) => {
    lines.push(`${String(i + 1).padStart(2)}. ${flat(t.id)}  ${flat(t.title)}`);
    if (t.dependsOn.length > 0) lines.push(`      after:  ${t.dependsOn.map(flat).join(', ')}`);
    lines.push(`      check:  ${t.check === undefined ? '(none)' : flat(t.check)}`);
    if (t.tools) lines.push(`      tools:  ${t.tools.map(flat).join(', ') || '(none)'}`);
    if (t.paths) lines.push(`      paths:  ${t.paths.map(flat).join(', ') || '(none)'}`);
  });
  return lines.join('\n');
}

const EscalationInput = z.object({
  taskId: PlanTaskId,
  title: z.string(),
  failureClass: FailureClass,
  reason: z.string(),
  choices: z.array(z.string()).optional(),
});

function escalationPreview(input: unknown): string | undefined {
  const parsed = EscalationInput.safeParse(input);
  if (!parsed.success) return undefined;
  const e = parsed.data;
  return [
    `task:     ${flat(e.taskId)}  ${flat(e.title)}`,
    `failure:  ${e.failureClass}`,
    `reason:   ${flat(e.reason)}`,
    `choices:  ${(e.choices ?? ['retry', 'skip', 'abort']).map(flat).join(', ')}`,
  ].join('\n');
}

function flat(s: string): string {
  return s.replace(/\r\n|\r|\n/g, '\\n');
}
