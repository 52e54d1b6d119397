import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { recoverTask } from '../../src/plan/recover';
import { recoveryMessage } from '../../src/plan/recovery-message';
import { observed } from '../tools/pipeline-harness';
import { checkFailure, failedCall, recoveryHarness } from './recover-harness';

const signal = () => new AbortController().signal;
/** What compile.ts would add: each event's recovery message, in order. */
const messages = (events: readonly EventEnvelope[]) =>
  events.flatMap((e) => {
    const m = recoveryMessage(e, events);
    return m === undefined ? [] : [{ type: e.type, m }];
  });

describe('recoveryMessage: what the model is told', () => {
  it("a retry that succeeded: the retried call's result, once, and nothing for the steps before it", async () => {
    let runs = 0;
    const { h, deps } = recoveryHarness({
      exec: () => (runs++ < 1 ? { status: 'timeout', output: '' } : { output: 'status: healthy\n' }),
    });
    await recoverTask(await failedCall(h, { command: 'node scripts/health.js' }), deps, signal());
    const told = messages(h.log.events());
    expect(told).toHaveLength(1);
    expect(told[0]?.type).toBe('recovery.applied');
    expect(told[0]?.m).toContain('Your call call_1 failed (transient)');
    expect(told[0]?.m).toContain('retry 1 of 2');
    expect(told[0]?.m).toContain('status: healthy');
  });

  it("feedback: what failed and to try again, with the output of gatehouse's own check call", async () => {
    const { h, deps } = recoveryHarness({ exec: () => ({ exitCode: 1, output: 'FAIL test/a.test.ts: 1 failing' }) });
    // The driver runs the check as gatehouse's own call and hands it over with the failure.
    const check = observed(
      await h.pipeline.run({
        callId: 'check_t2_1',
        turn: 2,
        tool: 'bash',
        input: { command: 'npm test' },
        actor: 'runtime',
      }),
    );
    const failure = {
      ...checkFailure(),
      call: { callId: check.callId, tool: 'bash', input: { command: 'npm test' }, turn: 2 },
    };
    expect(await recoverTask(failure, deps, signal())).toEqual({ kind: 'continue' });
    const told = messages(h.log.events());
    expect(told).toHaveLength(1);
    expect(told[0]?.m).toContain('Task t2 did not succeed (logic: check `npm test` exited 1)');
    expect(told[0]?.m).toContain('Attempt 1 of 1');
    expect(told[0]?.m).toContain('1 failing');
  });

  it("a person's decision", async () => {
    const { h, deps } = recoveryHarness({
      exec: () => ({ status: 'failed', exitCode: null, output: 'Segmentation fault' }),
    });
    await recoverTask(await failedCall(h, { command: 'node a.js' }), deps, signal());
    const told = messages(h.log.events());
    expect(told.map((t) => t.type)).toEqual(['recovery.escalated']);
    expect(told[0]?.m).toContain('chose abort');
  });
});
