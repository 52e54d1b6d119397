import type { EventDataOf, FailureClass, PlanTask } from '@gatehouse/shared';

export type { FailureClass, PlanChanges, PlanTask, RecoveryChoice } from '@gatehouse/shared';

/**
 * The contracts of plan mode's parts (issue 15), one file each in this folder:
 *  - validate-plan.ts    `validatePlan(input, scope)`: a submitted plan → its tasks, or every problem found
 *  - apply-changes.ts    `applyPlanChanges(tasks, changes)`: an approver's changes, validated again
 *  - classify-failure.ts `classifyFailure(failure)`: every failure gets a class before any recovery
 *  - recovery-recipes.ts `recoveryRecipes(config)`: what is done about each class (defaults, the config's)
 */

/** What a plan may use: the run's own tools (a task's `tools` must be among them). */
export interface PlanScope {
  tools: readonly string[];
}

/** A validated plan, or every problem with it (each says what to change), for the model to revise. */
export type PlanCheck = { ok: true; tasks: PlanTask[] } | { ok: false; problems: string[] };

/** The approved plan after an approver's changes, or the one problem that refused them (naming the task). */
export type ChangedPlan = { ok: true; tasks: PlanTask[]; skipped: string[] } | { ok: false; problem: string };

/** A failure as the classifier sees it. */
export type FailureInput =
  /** A tool call of the task that did not succeed (its observation, and what the execution reported). */
  | {
      kind: 'call';
      tool: string;
      outcome: Exclude<EventDataOf<'tool.observation'>['outcome'], 'ok' | 'pending'>;
      content: string;
      /** Where validation refused it, when it did. */
      stage?: EventDataOf<'tool.validation'>['stage'];
      /** The execution's status (`timeout`, `lost`, `error`…) and exit code, when it ran. */
      status?: string;
      exitCode?: number | null;
    }
  /** The task's check command did not exit 0. */
  | { kind: 'check'; command: string; exitCode: number | null; status?: string; output: string }
  /** complete_task's summary was refused (claims its observations do not support). */
  | { kind: 'summary'; reason: string };

export interface Classified {
  class: FailureClass;
  /** What decided the class: the words, status or exit code that matched (recorded in failure.classified). */
  evidence: string;
}

/** What is done about one class of failure. */
export interface RecoveryRecipe {
  /** Recorded in recovery.applied (`retry_transient`, `feedback_logic`…). */
  name: string;
  /**
   * retry: gatehouse runs the failed call again itself, after the backoff; feedback: the model is
   * told what failed and tries again; escalate: a person decides at once (retry, skip or abort).
   */
  action: 'retry' | 'feedback' | 'escalate';
  /** Attempts after the first failure (0: none). Always finite. */
  retries: number;
  /** Wait before each retry, in ms (the last value repeats). */
  backoffMs: number[];
  /** When the retries are used up: ask a person (retry, skip or abort), or fail the task and stop the plan. */
  exhausted: 'escalate' | 'fail';
}

export type RecoveryRecipes = Record<FailureClass, RecoveryRecipe>;

/**
 * A task failure the plan driver hands to recovery (plan/recover.ts). A task fails when its check
 * fails after complete_task, when complete_task's summary is refused, or when one of its calls fails
 * for a reason that is not the model's ordinary work: a command that merely exits non-zero (a
 * search with no match, tests still red) is an observation for the model, not a task failure.
 */
export interface TaskFailure {
  planId: string;
  task: PlanTask;
  /** The task's place in the approved plan (1-based) and the plan's length. */
  index: number;
  total: number;
  failure: FailureInput;
  /** The call that failed (absent for a check or a summary); a transient one is run again as it was proposed. */
  call?: { callId: string; tool: string; input: unknown; turn: number };
}

/** What the plan driver does after recovery has dealt with a failure (every step is on record first). */
export type RecoveryStep =
  /** The model has been told (feedback), or a retried call's result is on record: the next turn. */
  | { kind: 'continue' }
  /** Start the task again (a person chose retry): task.started with the next attempt. */
  | { kind: 'retry_task' }
  /** Skip the task; tasks that depend on it are skipped too. */
  | { kind: 'skip' }
  /** Stop the plan: plan.completed with aborted. */
  | { kind: 'abort' }
  /** Retries used up and the recipe says fail: task.failed, and the plan stops. */
  | { kind: 'fail'; error: string }
  /** A person must decide and nobody can now (headless): the run pauses on this request (exit 3). */
  | { kind: 'pending'; requestId: string };
