import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { recoverTask } from '../../src/plan/recover';
import { recoveryMessage } from '../../src/plan/recovery-message';
import { openRetry, settleRetry } from '../../src/plan/settle-retry';
import { checkFailure, failedCall, PLAN_ID, recoveryHarness, TASK, trail } from './recover-harness';

const signal = () => new AbortController().signal;
const told = (events: readonly EventEnvelope[]) =>
  events.flatMap((e) => (recoveryMessage(e, events) === undefined ? [] : [e.type]));

describe('settleRetry: the outcome of a retry the model makes', () => {
  it('a feedback retry whose task then completes is recorded succeeded, once, with its attempt', async () => {
    const { h, deps } = recoveryHarness();
    await recoverTask(checkFailure(), deps, signal());
    expect(openRetry(h.log.events(), PLAN_ID, TASK.id)?.data).toMatchObject({ outcome: 'retrying', attempt: 1 });
    settleRetry(deps, PLAN_ID, TASK.id, 'succeeded');
    settleRetry(deps, PLAN_ID, TASK.id, 'succeeded');
    const applied = h.log.events().filter((e) => e.type === 'recovery.applied');
    expect(applied.map((e) => e.data)).toEqual([
      expect.objectContaining({ outcome: 'retrying', attempt: 1, recipe: 'feedback_logic' }),
      {
        planId: PLAN_ID,
        taskId: 't2',
        class: 'logic',
        recipe: 'feedback_logic',
        attempt: 1,
        maxAttempts: 1,
        outcome: 'succeeded',
      },
    ]);
    expect(applied[1]!.causationId).toBe(applied[0]!.id);
    expect(openRetry(h.log.events(), PLAN_ID, TASK.id)).toBeUndefined();
    // The model made the retry: there is no result of gatehouse's to tell it.
    expect(told(h.log.events())).toEqual(['recovery.applied']);
  });

  it("a retry gatehouse ran earlier does not make a later feedback success repeat that retry's result", async () => {
    let runs = 0;
    const { h, deps } = recoveryHarness({
      exec: () => (runs++ < 1 ? { status: 'timeout', output: '' } : { output: 'status: healthy\n' }),
    });
    await recoverTask(await failedCall(h, { command: 'node scripts/health.js' }), deps, signal());
    await recoverTask(checkFailure(), deps, signal());
    settleRetry(deps, PLAN_ID, TASK.id, 'succeeded');
    const events = h.log.events();
    const succeeded = events.filter((e) => e.type === 'recovery.applied' && e.data.outcome === 'succeeded');
    expect(succeeded).toHaveLength(2);
    expect(recoveryMessage(succeeded[0]!, events)).toContain('status: healthy');
    expect(recoveryMessage(succeeded[1]!, events)).toBeUndefined();
  });

  it('nothing is settled without an open retry: none made, or one gatehouse already settled', async () => {
    const { h, deps } = recoveryHarness({ exec: () => ({ output: 'ok\n' }) });
    settleRetry(deps, PLAN_ID, TASK.id, 'succeeded');
    expect(h.log.events().filter((e) => e.type === 'recovery.applied')).toEqual([]);
    const { h: h2, deps: deps2 } = recoveryHarness({
      exec: () => ({ status: 'timeout', output: '' }),
    });
    await recoverTask(await failedCall(h2, { command: 'node a.js' }), deps2, signal());
    const before = trail(h2.log.events());
    settleRetry(deps2, PLAN_ID, TASK.id, 'failed');
    expect(trail(h2.log.events())).toEqual(before);
  });
});
