import { setTimeout as delay } from 'node:timers/promises';
import type { ToolCall } from '../tools/pipeline';
import { record } from '../tools/pipeline/record';
import { escalate } from './escalate';
import { failureOfCall } from './failure-of-call';
import { classifyFailure } from './classify-failure';
import type { FailureInput, RecoveryStep, TaskFailure } from './plan-types';
import { backoffFor } from './recovery-recipes';
import { recoveryAttempts } from './recovery-attempts';
import type { RecoveryDeps } from './recovery-deps';
import { settleRetry } from './settle-retry';

export type { RecoveryDeps } from './recovery-deps';

const MAX_EVIDENCE = 2000;

/** Production's backoff: a real timer that the run's signal cancels. */
const realSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  delay(ms, undefined, { signal }).catch((e: unknown) => {
    // The run's own reason for stopping, not the timer's generic AbortError.
    throw signal.aborted ? signal.reason : e;
  });

/**
 * Deals with one task failure (issue 15): classifies it first (`failure.classified`), then applies
 * its class's recipe, each step recorded before it is acted on:
 *  - retry: waits the backoff, then runs the failed call again through the pipeline as gatehouse's
 *    own call (`<callId>.retry<n>`, same gates as any call); a retry that fails is classified again
 *    and handled by its own class's recipe;
 *  - feedback: the model is shown the failure and tries again;
 *  - escalate, or retries used up: a person chooses retry, skip or abort (or the recipe fails the task).
 * Attempts are folded from the log, so a resumed run continues the count. Rejects with the signal's
 * reason when the run is cancelled during a backoff or a retried call.
 */
export async function recoverTask(
  failure: TaskFailure,
  deps: RecoveryDeps,
  signal: AbortSignal,
): Promise<RecoveryStep> {
  const { planId, task } = failure;
  // The model's retry of this task (feedback) did not work: that attempt's outcome first.
  settleRetry(deps, planId, task.id, 'failed');
  let current: FailureInput = failure.failure;
  let callId = failure.call?.callId;
  // Every pass but the last records one more retry of a recipe with finitely many; this bound only
  // guards against a bug turning that into an endless loop.
  const maxPasses = Object.values(deps.recipes).reduce((n, r) => n + r.retries, 0) + 1;
  for (let pass = 0; pass < maxPasses; pass++) {
    signal.throwIfAborted();
    const classified = (deps.classify ?? classifyFailure)(current);
    const cls = classified.class;
    const evidence = classified.evidence.slice(0, MAX_EVIDENCE);
    const classifiedEvent = record(deps, 'failure.classified', 'runtime', {
      planId,
      taskId: task.id,
      class: cls,
      evidence,
      ...(callId ? { callId } : {}),
    });
    deps.log.sync();
    const recipe = deps.recipes[cls];
    if (recipe.action === 'escalate') {
      return escalate(deps, failure, { task, cls, evidence, recipe, exhausted: false }, classifiedEvent.id, signal);
    }

    const attempt = recoveryAttempts(deps.log.events(), planId, task.id, cls) + 1;
    const applied = { planId, taskId: task.id, class: cls, recipe: recipe.name, attempt, maxAttempts: recipe.retries };
    if (attempt > recipe.retries) {
      record(deps, 'recovery.applied', 'runtime', { ...applied, outcome: 'exhausted' }, classifiedEvent.id);
      deps.log.sync();
      if (recipe.exhausted === 'fail') {
        return {
          kind: 'fail',
          error:
            `task ${task.id} failed (${cls}: ${evidence.slice(0, 1000)}) and recipe ${recipe.name} has no ` +
            `retries left (${recipe.retries}); the plan stops.`,
        };
      }
      return escalate(deps, failure, { task, cls, evidence, recipe, exhausted: true }, classifiedEvent.id, signal);
    }

    const delayMs = recipe.action === 'retry' ? Math.max(0, Math.round(backoffFor(recipe, attempt))) : undefined;
    const retrying = record(
      deps,
      'recovery.applied',
      'runtime',
      { ...applied, outcome: 'retrying', ...(delayMs !== undefined ? { delayMs } : {}) },
      classifiedEvent.id,
    );
    deps.log.sync();
    if (delayMs) await (deps.sleep ?? realSleep)(delayMs, signal);
    // Feedback: the failure is already the model's observation (recoveryMessage adds the rest). A
    // retry with no call to repeat (a check, a summary) comes to the same: the model goes again.
    if (recipe.action === 'feedback' || !failure.call) return { kind: 'continue' };

    const retriedId = retryCallId(deps, failure.call.callId, attempt);
    // A plain object, not a literal: it carries the task id to a ToolCall that takes one, and
    // is still a ToolCall where it does not.
    const call = { ...failure.call, callId: retriedId, actor: 'runtime' as const, taskId: task.id };
    const retried = await deps.pipeline.run(call satisfies ToolCall, signal);
    signal.throwIfAborted();
    if (retried.kind === 'pending') return { kind: 'pending', requestId: retried.requestId };
    const observation = retried.observation;
    if (observation.outcome === 'ok') {
      record(deps, 'recovery.applied', 'runtime', { ...applied, outcome: 'succeeded' }, retrying.id);
      deps.log.sync();
      return { kind: 'continue' };
    }
    record(deps, 'recovery.applied', 'runtime', { ...applied, outcome: 'failed' }, retrying.id);
    current = failureOfCall({ ...observation, outcome: observation.outcome }, deps.log.events());
    callId = retriedId;
  }
  throw new Error(`recovery of task ${task.id} did not settle within ${maxPasses} passes`);
}

/** `<callId>.retry<n>`, within the pipeline's call-id shape, and never the id of a call already on record. */
function retryCallId(deps: RecoveryDeps, base: string, attempt: number): string {
  const calls = deps.tracker.state.approvals.calls;
  for (let n = attempt; ; n++) {
    const suffix = `.retry${n}`;
    const id = `${base.slice(0, 128 - suffix.length)}${suffix}`;
    if (!calls[id]) return id;
  }
}
