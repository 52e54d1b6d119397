import { describe, expect, it } from 'vitest';
import type { EventOf } from '@gatehouse/shared';
import { recoverTask } from '../../src/plan/recover';
import type { ExecResponder } from '../../src/testing/index';
import { harness, stoppedAfter, RAN } from '../tools/pipeline-harness';
import { checkFailure, failedCall, recoveryHarness, RECIPES, trail } from './recover-harness';

/** A command that times out `timeouts` times, then answers. */
function flaky(timeouts: number): ExecResponder {
  let runs = 0;
  return () =>
    runs++ < timeouts ? { status: 'timeout', output: 'waiting for localhost:8080' } : { output: 'healthy\n' };
}

const HEALTH = { command: 'node scripts/health.js' };
const applied = (events: readonly unknown[]) =>
  (events as EventOf<'recovery.applied'>[]).filter((e) => e.type === 'recovery.applied').map((e) => e.data);
const ran = (callId: string) => RAN.map((t) => `${t}:${callId}`);

describe('recoverTask: transient failures', () => {
  it('classifies first, then runs the call again through the pipeline after each backoff till it works', async () => {
    const { h, deps, delays } = recoveryHarness({ exec: flaky(2) });
    const failure = await failedCall(h, HEALTH);
    const from = h.log.events().length;

    const step = await recoverTask(failure, deps, new AbortController().signal);

    expect(step).toEqual({ kind: 'continue' });
    expect(delays).toEqual([5000, 30000]);
    expect(trail(h.log.events(), from)).toEqual([
      'failure.classified:transient',
      'recovery.applied:retrying',
      ...ran('call_1.retry1'),
      'recovery.applied:failed',
      'failure.classified:transient',
      'recovery.applied:retrying',
      ...ran('call_1.retry2'),
      'recovery.applied:succeeded',
    ]);
    expect(applied(h.log.events())).toEqual([
      expect.objectContaining({ attempt: 1, maxAttempts: 2, outcome: 'retrying', delayMs: 5000 }),
      expect.objectContaining({ attempt: 1, outcome: 'failed' }),
      expect.objectContaining({ attempt: 2, maxAttempts: 2, outcome: 'retrying', delayMs: 30000 }),
      expect.objectContaining({ attempt: 2, outcome: 'succeeded', recipe: 'retry_transient', taskId: 't2' }),
    ]);
    // The retried call is gatehouse's own, the same command, and ran through every gate again.
    expect(h.log.eventsOf('call_1.retry1')[0]?.actor).toBe('runtime');
    expect(h.sandbox.executed().map((c) => (c.input as { command: string }).command)).toEqual([
      HEALTH.command,
      HEALTH.command,
      HEALTH.command,
    ]);
    const classified = h.log.events().filter((e) => e.type === 'failure.classified');
    expect(classified.map((e) => (e.data as { callId?: string }).callId)).toEqual(['call_1', 'call_1.retry1']);
  });

  it('the last backoff value repeats', async () => {
    const recipes = { ...RECIPES, transient: { ...RECIPES.transient, retries: 3, backoffMs: [10] } };
    const { h, deps, delays } = recoveryHarness({ exec: flaky(3), recipes });
    const step = await recoverTask(await failedCall(h, HEALTH), deps, new AbortController().signal);
    expect(step).toEqual({ kind: 'continue' });
    expect(delays).toEqual([10, 10, 10]);
  });

  it('retries that are used up fail the task when the recipe says fail, asking nobody', async () => {
    const recipes = { ...RECIPES, transient: { ...RECIPES.transient, exhausted: 'fail' as const } };
    const { h, deps, delays } = recoveryHarness({ exec: flaky(99), recipes });
    const step = await recoverTask(await failedCall(h, HEALTH), deps, new AbortController().signal);
    expect(step).toMatchObject({ kind: 'fail', error: expect.stringContaining('retry_transient') as unknown });
    expect(delays).toEqual([5000, 30000]);
    expect(h.sandbox.executed()).toHaveLength(3); // the call and its two retries: finite
    expect(applied(h.log.events()).at(-1)).toMatchObject({ attempt: 3, maxAttempts: 2, outcome: 'exhausted' });
    expect(h.log.events().some((e) => e.type === 'approval.requested')).toBe(false);
  });

  it('attempts survive a resume: a fresh tracker folded from the same log continues the count', async () => {
    const first = recoveryHarness({ exec: flaky(99) });
    const failure = await failedCall(first.h, HEALTH);
    await recoverTask(failure, first.deps, new AbortController().signal);
    // The run as a crash right after the first retry failed leaves it.
    const events = stoppedAfter(first.h, 'recovery.applied', 1);
    const resumed = recoveryHarness({ h: harness({ resume: { events, sandbox: first.h.sandbox } }) });
    const before = first.h.sandbox.executed().length;
    const from = resumed.h.log.events().length;

    const step = await recoverTask(failure, resumed.deps, new AbortController().signal);

    expect(resumed.delays).toEqual([30000]); // the second retry's backoff: the first is not made again
    expect(first.h.sandbox.executed().length - before).toBe(1);
    expect(applied(resumed.h.log.events().slice(from))).toEqual([
      expect.objectContaining({ attempt: 2, outcome: 'retrying' }),
      expect.objectContaining({ attempt: 2, outcome: 'failed' }),
      expect.objectContaining({ attempt: 3, outcome: 'exhausted' }),
    ]);
    // No channel in this run: nobody can answer the escalation, which stops the plan.
    expect(step).toEqual({ kind: 'abort' });
  });

  it('a cancel ends the backoff wait: nothing is run again', async () => {
    const recipes = { ...RECIPES, transient: { ...RECIPES.transient, backoffMs: [60_000] } };
    const { h, deps } = recoveryHarness({ exec: flaky(99), recipes });
    const real = { ...deps, sleep: undefined };
    delete real.sleep;
    const failure = await failedCall(h, HEALTH);
    const ac = new AbortController();
    const started = Date.now();
    setTimeout(() => ac.abort(new Error('cancelled by the test')), 20);
    await expect(recoverTask(failure, real, ac.signal)).rejects.toThrow('cancelled by the test');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(h.sandbox.executed()).toHaveLength(1);
    expect(trail(h.log.events()).at(-1)).toBe('recovery.applied:retrying');
  });
});

describe('recoverTask: feedback', () => {
  it('a failed check is feedback for the model while attempts remain, then escalates', async () => {
    const { h, deps, delays } = recoveryHarness();
    const from = h.log.events().length;
    expect(await recoverTask(checkFailure(), deps, new AbortController().signal)).toEqual({ kind: 'continue' });
    expect(trail(h.log.events(), from)).toEqual(['failure.classified:logic', 'recovery.applied:retrying']);
    expect(applied(h.log.events())[0]).toEqual({
      planId: 'plan_recover1',
      taskId: 't2',
      class: 'logic',
      recipe: 'feedback_logic',
      attempt: 1,
      maxAttempts: 1,
      outcome: 'retrying',
    });
    expect(delays).toEqual([]);
    expect(h.sandbox.executed()).toHaveLength(0);

    // The model tried again and the check failed again: that retry failed (on record first), the one
    // retry is used up; nobody can answer.
    expect(await recoverTask(checkFailure(), deps, new AbortController().signal)).toEqual({ kind: 'abort' });
    expect(trail(h.log.events(), from).slice(2)).toEqual([
      'recovery.applied:failed',
      'failure.classified:logic',
      'recovery.applied:exhausted',
      'approval.requested:esc_t2_1',
      'recovery.escalated:requested',
      'approval.denied:esc_t2_1',
      'recovery.escalated:decided',
    ]);
  });

  it('a call refused by validation is invalid input: feedback', async () => {
    const { h, deps } = recoveryHarness();
    const step = await recoverTask(
      {
        ...checkFailure(),
        failure: { kind: 'call', tool: 'bash', outcome: 'rejected', content: 'command: required', stage: 'schema' },
      },
      deps,
      new AbortController().signal,
    );
    expect(step).toEqual({ kind: 'continue' });
    expect(applied(h.log.events())[0]).toMatchObject({ class: 'invalid_input', recipe: 'feedback_invalid_input' });
  });
});
