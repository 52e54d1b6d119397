import { z } from 'zod';
import { ConfigBudgets } from '../config/schema';

/**
 * The eval suite file (docs/eval.md): tasks, each a repository, what to do and the command whose
 * exit 0 means it was done. Strict, like the config: an unknown key is a typo that would otherwise
 * silently change what is measured, and the problem names the closest right key.
 */

/** Ids name tasks in reports, file names and Markdown: a plain, short word. */
export const TaskId = z.string({ error: 'expected a string' }).regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
  error: 'expected 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
});

const text = (what: string) =>
  z.string({ error: `expected ${what}` }).refine((s) => s.trim() !== '', `expected ${what}`);

/**
 * The config's budgets (the same keys and units as `budgets` in a project config), with the wall
 * clock held to what `--max-wall` takes (at most 7 days).
 */
export const TaskBudgets = ConfigBudgets.extend({
  wallClockSeconds: z
    .number({ error: 'expected a whole number of seconds, 1 to 604800 (7 days)' })
    .int({ error: 'expected a whole number of seconds, 1 to 604800 (7 days)' })
    .min(1, { error: 'expected a whole number of seconds, 1 to 604800 (7 days)' })
    .max(7 * 86_400, { error: 'expected a whole number of seconds, 1 to 604800 (7 days)' })
    .optional(),
});
export type TaskBudgets = z.infer<typeof TaskBudgets>;

export const SuiteTask = z.strictObject({
  id: TaskId,
  /** A directory, relative to the suite file or absolute: copied into each run's sandbox, never changed. */
  repository: text('a directory (relative to the suite file, or absolute)'),
  /** What the agent is asked to do. */
  task: text('the task, a non-empty string'),
  /** The run's `--check`: the run is final only if this exits 0 after the last change. */
  check: text('a command line'),
  /** `--config FILE` for the run (relative to the suite file). */
  config: text('a config file (relative to the suite file, or absolute)').optional(),
  /** `--policy FILE` for the run (relative to the suite file). */
  policy: text('a policy file (relative to the suite file, or absolute)').optional(),
  /** `--model` for the run; `scripted:PATH` is relative to the suite file. Else `--model`, else the suite's. */
  model: text('a model spec such as scripted:PATH or openai:MODEL').optional(),
  /** Over the suite's budgets, key by key. */
  budgets: TaskBudgets.optional(),
});
export type SuiteTask = z.infer<typeof SuiteTask>;

export const SuiteFile = z.strictObject({
  /** A name for reports. */
  name: text('a name').optional(),
  /** The model of every task that names none, when no `--model` is given. */
  model: text('a model spec such as scripted:PATH or openai:MODEL').optional(),
  /** Budgets of every task (each task's own `budgets` win, key by key). */
  budgets: TaskBudgets.optional(),
  tasks: z
    .array(SuiteTask, { error: 'expected a list of tasks ([{...}])' })
    .min(1, { error: 'expected one task or more' }),
});
export type SuiteFile = z.infer<typeof SuiteFile>;

/** A task as it runs: every path absolute, its model and budgets decided. */
export interface EvalTask {
  id: string;
  repository: string;
  task: string;
  check: string;
  config?: string;
  policy?: string;
  /** The model spec the run is given (a scripted path made absolute). */
  model: string;
  /** Where the model came from: the task itself, `--model`, or the suite's `model`. */
  modelFrom: 'task' | '--model' | 'suite';
  budgets: TaskBudgets;
}

export interface Suite {
  /** The suite file, absolute. */
  file: string;
  name: string | null;
  tasks: EvalTask[];
}
