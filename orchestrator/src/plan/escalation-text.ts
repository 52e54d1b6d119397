import type { FailureClass, PlanTask, RecoveryRecipe } from './plan-types';

export interface EscalationCause {
  task: PlanTask;
  cls: FailureClass;
  evidence: string;
  recipe: RecoveryRecipe;
  /** Retries were made and are used up (otherwise the recipe escalates at once). */
  exhausted: boolean;
}

const MAX_EVIDENCE = 1000;

/**
 * What a person is told when recovery escalates: what failed, why it reached them, and what each
 * choice does. A permission failure is settled outside the run: the answer is only retry, skip or
 * abort, so nothing here invites anyone to type a secret into it.
 */
export function escalationText(c: EscalationCause): string {
  const evidence = c.evidence.length > MAX_EVIDENCE ? `${c.evidence.slice(0, MAX_EVIDENCE)}…` : c.evidence;
  const what = `Task ${c.task.id} "${c.task.title}" failed (${c.cls}: ${evidence}).`;
  const retries = `${c.recipe.retries} ${c.recipe.retries === 1 ? 'retry' : 'retries'}`;
  const why = c.exhausted
    ? `Recipe ${c.recipe.name} has used its ${retries}.`
    : c.cls === 'unknown'
      ? `gatehouse could not tell what kind of failure this is, so recipe ${c.recipe.name} asks a person.`
      : `Recipe ${c.recipe.name} asks a person.`;
  const access =
    c.cls === 'permission'
      ? " The task lacks access. Give it access outside this run, through gatehouse's environment " +
        '(`--setup-env NAME` for setup), the project config file or a secrets vault, then choose retry. ' +
        'The answer here is only a choice: gatehouse never takes a credential as text.'
      : '';
  const choices =
    'Choose retry (start the task again), skip (skip it and the tasks that depend on it) or abort (stop the plan).';
  return `${what} ${why}${access} ${choices}`;
}
