import { z } from 'zod';
import { PlanChanges, PlanTask, RecoveryChoice } from '@gatehouse/shared';
import { applyPlanChanges } from '../plan/apply-changes';
import type { ApprovalAnswer } from './channels/types';

/** The tool whose approval is a plan's gate (plan mode). */
export const SUBMIT_PLAN = 'submit_plan';
/** The tool name of a recovery escalation: a request the plan driver records itself, with no tool call behind it. */
export const ESCALATION = 'escalation';

export type Answered = Exclude<ApprovalAnswer, { decision: 'pause' }>;
export type CheckedAnswer = { ok: true; answer: Answered } | { ok: false; problem: string };

const SubmittedPlan = z.object({ tasks: z.array(PlanTask).min(1) });

/** The tasks of a submit_plan request, in the order submitted; undefined when its input holds none. */
export function planTasksOf(input: unknown): PlanTask[] | undefined {
  const parsed = SubmittedPlan.safeParse(input);
  return parsed.success ? parsed.data.tasks : undefined;
}

/** Changes without their empty parts; undefined when nothing is left (approved as it was). */
export function nonEmptyChanges(changes: PlanChanges): PlanChanges | undefined {
  const out: PlanChanges = {
    ...(changes.skip?.length ? { skip: changes.skip } : {}),
    ...(changes.order?.length ? { order: changes.order } : {}),
    ...(changes.edit && Object.keys(changes.edit).length > 0 ? { edit: changes.edit } : {}),
  };
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Whether an answer fits the request it answers, and the answer as it is to be recorded. Changes
 * only approve a plan, and are applied to its tasks (plan/apply-changes.ts) so a set that breaks
 * the plan (a reorder against a dependency) is refused naming the problem, before anything is
 * recorded; a choice only answers an escalation, which a grant must carry; a question only
 * answers a plan. Every channel and `gatehouse plan …` check with this, and askApprover again.
 */
export function checkPlanAnswer(tool: string, input: unknown, answer: Answered): CheckedAnswer {
  if (answer.decision === 'deny') {
    const { clarify, ...denial } = answer;
    if (!clarify) return { ok: true, answer: denial };
    if (tool !== SUBMIT_PLAN) return refused(`only a plan can be answered with a question; this request is ${tool}`);
    if (!answer.reason.trim()) return refused('a question for the model needs its text');
    return { ok: true, answer: { ...denial, clarify: true } };
  }
  const { changes, choice, ...grant } = answer;
  if ((tool === SUBMIT_PLAN || tool === ESCALATION) && grant.scope === 'run')
    return refused(
      `a ${tool === SUBMIT_PLAN ? 'plan' : 'decision on an escalation'} is approved once: ` +
        'an approval for the run would stand for later ones nobody has seen; answer without --scope run',
    );
  if (tool === ESCALATION) {
    if (changes) return refused('changes approve a plan; an escalation is answered with retry, skip or abort');
    const parsed = RecoveryChoice.safeParse(choice);
    if (!parsed.success) return refused('an escalation is answered with a choice: retry, skip or abort');
    return { ok: true, answer: { ...grant, choice: parsed.data } };
  }
  if (choice !== undefined) return refused(`a choice (retry, skip, abort) answers an escalation, not ${tool}`);
  if (changes === undefined) return { ok: true, answer: grant };
  if (tool !== SUBMIT_PLAN) return refused(`only a plan can be approved with changes; this request is ${tool}`);
  const parsed = PlanChanges.safeParse(changes);
  if (!parsed.success) return refused(`the changes are malformed: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const wanted = nonEmptyChanges(parsed.data);
  if (!wanted) return { ok: true, answer: grant };
  const tasks = planTasksOf(input);
  if (!tasks) return refused('the request holds no plan to change');
  const applied = applyPlanChanges(tasks, wanted);
  if (!applied.ok) return refused(`the changes were refused: ${applied.problem}`);
  return { ok: true, answer: { ...grant, changes: wanted } };
}

function refused(problem: string): { ok: false; problem: string } {
  return { ok: false, problem };
}
