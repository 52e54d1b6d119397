import { describe, expect, it } from 'vitest';
import { actionHash } from '@gatehouse/shared';
import { askApprover } from '../../src/approval/ask-approver';
import type { ApprovalAnswer } from '../../src/approval/channels/types';
import { requestApproval } from '../../src/approval/request-approval';
import { fold } from '../../src/events/state';
import { harness, scriptedChannel, type Harness } from '../tools/pipeline-harness';

const PLAN = {
  tasks: [
    { id: 't1', title: 'Add a failing test for add()', dependsOn: [] },
    { id: 't2', title: 'Fix add() in src/math.js', dependsOn: ['t1'] },
    { id: 't3', title: 'Document add() in README.md', dependsOn: [] },
  ],
};
const ESCALATION = { taskId: 't2', title: 'Fix add()', failureClass: 'unknown', reason: 'exit 1', choices: [] };

const who = { approver: 'user:test', channel: 'terminal' } as const;
const grant = (over: Partial<Extract<ApprovalAnswer, { decision: 'grant' }>> = {}): ApprovalAnswer => ({
  decision: 'grant',
  scope: 'once',
  ...who,
  ...over,
});

/** A request recorded as the plan gate or the plan driver records it, put to `answers` in turn. */
async function ask(h: Harness, tool: string, input: unknown, callId: string) {
  const request = requestApproval(h.deps, {
    callId,
    tool,
    input,
    actionHash: actionHash({ name: tool, input }),
    executionHash: actionHash({ name: tool, input }),
    decision: { policyId: `ask: ${tool}`, reason: 'plan mode', risk: [], shape: tool },
    causationId: h.log.events().at(-1)!.id,
  });
  return { request, result: await askApprover(h.deps, request, input) };
}

describe('askApprover: the answers of plan mode', () => {
  it('records a plan approved with changes, and the request state carries them for the driver', async () => {
    const changes = { skip: ['t3'], edit: { t2: 'Fix the sign in add()' } };
    const h = harness({ channel: scriptedChannel(grant({ changes })) });
    const { request, result } = await ask(h, 'submit_plan', PLAN, 'call_plan');
    expect(result.kind).toBe('ready');
    const granted = h.log.events().at(-1)!;
    expect(granted).toMatchObject({ type: 'approval.granted', data: { changes, requestId: request.requestId } });
    expect(granted.data).not.toHaveProperty('choice');
    expect(h.tracker.state.approvals.requests[request.requestId]?.answer).toMatchObject({ changes });
    // As folded from the log alone (a resumed run).
    expect(fold(h.log.events()).approvals.requests[request.requestId]?.answer).toMatchObject({ changes });
  });

  it('never records changes that break the plan: the channel is asked again, the good answer recorded', async () => {
    const channel = scriptedChannel(
      grant({ changes: { order: ['t2', 't1', 't3'] } }),
      grant({ changes: { skip: ['t3'] } }),
    );
    const h = harness({ channel });
    const { result } = await ask(h, 'submit_plan', PLAN, 'call_plan');
    expect(result.kind).toBe('ready');
    expect(channel.asked).toHaveLength(2);
    const answers = h.log.events().filter((e) => e.type === 'approval.granted');
    expect(answers).toHaveLength(1);
    expect(answers[0]!.data).toMatchObject({ changes: { skip: ['t3'] } });
  });

  it('leaves the request pending after three answers that do not fit, recording none', async () => {
    const bad = () => grant({ changes: { skip: ['t9'] } });
    const h = harness({ channel: scriptedChannel(bad(), bad(), bad()) });
    const { request, result } = await ask(h, 'submit_plan', PLAN, 'call_plan');
    expect(result).toEqual({ kind: 'pending', callId: 'call_plan', tool: 'submit_plan', requestId: request.requestId });
    expect(h.log.events().some((e) => e.type.startsWith('approval.granted'))).toBe(false);
    expect(h.tracker.state.approvals.requests[request.requestId]?.status).toBe('pending');
  });

  it('a clarifying question: approval.denied with clarify, and an observation that asks, not rejects', async () => {
    const h = harness({
      channel: scriptedChannel({ decision: 'deny', ...who, reason: 'Why is t3 separate?', clarify: true }),
    });
    const { request, result } = await ask(h, 'submit_plan', PLAN, 'call_plan');
    expect(result.kind).toBe('denied');
    const denied = h.log.events().find((e) => e.type === 'approval.denied')!;
    expect(denied.data).toMatchObject({ clarify: true, reason: 'Why is t3 separate?' });
    expect(h.tracker.state.approvals.requests[request.requestId]?.answer).toMatchObject({ clarify: true });
    if (result.kind !== 'denied') return;
    expect(result.observation.content).toContain(
      'The reviewer asks: Why is t3 separate?; answer it and submit the plan again.',
    );
    expect(result.observation.content).not.toContain('declined');
  });

  it('a plain rejection stays a rejection', async () => {
    const h = harness({ channel: scriptedChannel({ decision: 'deny', ...who, reason: 'too broad' }) });
    const { result } = await ask(h, 'submit_plan', PLAN, 'call_plan');
    if (result.kind !== 'denied') throw new Error('expected a denial');
    expect(result.observation.content).toContain('submit_plan was declined by user:test: too broad');
    expect(h.log.events().find((e) => e.type === 'approval.denied')!.data).not.toHaveProperty('clarify');
  });

  it('an escalation is granted only with a choice, which is recorded', async () => {
    const channel = scriptedChannel(grant(), grant({ choice: 'skip' }));
    const h = harness({ channel });
    const { request, result } = await ask(h, 'escalation', ESCALATION, 'esc_t2_1');
    expect(result.kind).toBe('ready');
    expect(channel.asked).toHaveLength(2);
    expect(
      h.log
        .events()
        .filter((e) => e.type === 'approval.granted')
        .map((e) => e.data),
    ).toMatchObject([{ choice: 'skip' }]);
    expect(h.tracker.state.approvals.requests[request.requestId]?.answer?.choice).toBe('skip');
  });

  it('ordinary calls: changes, choices and questions do not fit and are never recorded', async () => {
    const h = harness({
      channel: scriptedChannel(grant({ changes: { skip: ['t1'] } }), grant({ choice: 'retry' }), {
        decision: 'deny',
        ...who,
        reason: 'why?',
        clarify: true,
      }),
    });
    const { result } = await ask(h, 'bash', { command: 'echo hi' }, 'call_bash');
    expect(result.kind).toBe('pending');
    expect(h.log.events().some((e) => e.type === 'approval.granted' || e.type === 'approval.denied')).toBe(false);
  });
});
