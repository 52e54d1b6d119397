import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { changingCalls } from '../../src/run/restore-point';
import {
  DEFAULT_SANDBOX_REPLACEMENTS,
  replacementAllowed,
  sandboxReplacementBounds,
} from '../../src/run/sandbox-replacement';
import { SandboxLostError } from '../../src/sandbox/errors';
import { codingTools } from '../../src/tools/builtin/index';
import { harness } from '../tools/pipeline-harness';

/** Just enough of an envelope for the rules read here (type, data, seq, ts). */
function ev(seq: number, type: string, data: Record<string, unknown>, ts = new Date().toISOString()): EventEnvelope {
  return { seq, type, data, ts, id: `e${seq}`, actor: 'runtime', runId: 'run_x' } as unknown as EventEnvelope;
}

const lost = (seq: number, ts?: string) => ev(seq, 'sandbox.lost', { sandboxId: 'sbx-1', reason: 'died' }, ts);

describe('how many lost sandboxes a run replaces', () => {
  it('replaces up to the count, then stops, counting every loss in the log', () => {
    const bounds = { max: 2, windowMs: 60_000 };
    expect(replacementAllowed([lost(1)], bounds)).toEqual({ replace: true, attempt: 1 });
    expect(replacementAllowed([lost(1), lost(5)], bounds)).toEqual({ replace: true, attempt: 2 });
    const third = replacementAllowed([lost(1), lost(5), lost(9)], bounds);
    expect(third).toMatchObject({ replace: false });
    expect(!third.replace && third.why).toContain('lost 3 sandboxes and at most 2 are replaced');
  });

  it('replaces none later than the window after the first loss', () => {
    const now = Date.parse('2026-11-25T10:00:00Z');
    const first = lost(1, '2026-11-25T09:40:00Z');
    const late = replacementAllowed([first, lost(7, '2026-11-25T09:59:59Z')], { max: 5, windowMs: 600_000 }, now);
    expect(late).toMatchObject({ replace: false });
    expect(!late.replace && late.why).toContain('1200 s ago');
    expect(replacementAllowed([first], { max: 5, windowMs: 1_800_000 }, now)).toEqual({ replace: true, attempt: 1 });
  });

  it('GATEHOUSE_SANDBOX_REPLACEMENTS sets the count; 0 is off; nonsense is refused', () => {
    expect(sandboxReplacementBounds({})).toEqual(DEFAULT_SANDBOX_REPLACEMENTS);
    expect(sandboxReplacementBounds({ GATEHOUSE_SANDBOX_REPLACEMENTS: '1' }).max).toBe(1);
    const off = replacementAllowed([lost(1)], sandboxReplacementBounds({ GATEHOUSE_SANDBOX_REPLACEMENTS: '0' }));
    expect(off).toMatchObject({ replace: false });
    expect(() => sandboxReplacementBounds({ GATEHOUSE_SANDBOX_REPLACEMENTS: 'lots' })).toThrow(/whole number/);
    expect(() => sandboxReplacementBounds({ GATEHOUSE_SANDBOX_REPLACEMENTS: '-1' })).toThrow(/whole number/);
  });
});

describe('what a checkpoint must cover after a lost sandbox', () => {
  const call = (callId: string, sandboxId: string, status: string, from: number): EventEnvelope[] => [
    ev(from, 'tool.intent', { callId, tool: 'bash' }),
    ev(from + 1, 'tool.validation', { callId, ok: true, input: { command: 'touch x' } }),
    ev(from + 2, 'tool.execution.started', { callId, sandboxId }),
    ev(from + 3, 'tool.execution.completed', { callId, status }),
  ];

  it('a lost call of the lost sandbox is not a change to cover; the same call in a live sandbox is', () => {
    const registry = codingTools();
    const inLost = [...call('c1', 'sbx-1', 'lost', 1), ev(9, 'sandbox.lost', { sandboxId: 'sbx-1', reason: 'died' })];
    expect(changingCalls(inLost, registry)).toEqual([]);
    // No sandbox.lost: the sandbox may still hold what the call did.
    expect(changingCalls(call('c1', 'sbx-1', 'lost', 1), registry)).toEqual([{ seq: 4, tool: 'bash', callId: 'c1' }]);
    // Another sandbox was lost, not this one.
    const other = [...call('c1', 'sbx-2', 'lost', 1), ev(9, 'sandbox.lost', { sandboxId: 'sbx-1', reason: 'died' })];
    expect(changingCalls(other, registry)).toHaveLength(1);
    // A call that completed in the sandbox later lost did change what the model was told: still covered.
    const done = [...call('c1', 'sbx-1', 'ok', 1), ev(9, 'sandbox.lost', { sandboxId: 'sbx-1', reason: 'died' })];
    expect(changingCalls(done, registry)).toHaveLength(1);
  });
});

describe('the call in flight when its sandbox dies', () => {
  it('is recorded lost with an unknown outcome, and the model is told so', async () => {
    const h = harness();
    h.sandbox.invoke = () =>
      Promise.reject(new SandboxLostError(h.sandbox.sandboxId, 'container died (exit code 137)'));
    const obs = await h.call('bash', { command: 'sleep 30; touch done' });
    const completed = h.event<{ status: string; error: { message: string } }>('tool.execution.completed');
    expect(completed.status).toBe('lost');
    expect(completed.error.message).toContain('the sandbox was lost while this ran (container died (exit code 137))');
    expect(completed.error.message).toContain('its outcome is unknown');
    expect(completed.error.message).toContain('it is not run again');
    expect(obs.outcome).toBe('failed');
    expect(obs.content).toContain('[no result: the sandbox was lost while this ran');
  });
});
