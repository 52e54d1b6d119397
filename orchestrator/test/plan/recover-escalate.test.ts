import { describe, expect, it } from 'vitest';
import { actionHash, type EventOf, type RecoveryChoice } from '@gatehouse/shared';
import { headlessChannel } from '../../src/approval/channels/headless';
import type { ApprovalAnswer } from '../../src/approval/channels/types';
import { decidedEscalation } from '../../src/plan/decided-escalation';
import { recoverTask } from '../../src/plan/recover';
import type { ExecResponder } from '../../src/testing/index';
import { record } from '../../src/tools/pipeline/record';
import { deny, grant, harness, scriptedChannel } from '../tools/pipeline-harness';
import { failedCall, recoveryHarness, trail } from './recover-harness';

/** A grant carrying a person's choice, as a channel that offers the three answers gives it. */
const choose = (choice: RecoveryChoice, reason?: string): ApprovalAnswer => {
  const answer = { ...grant(), choice, ...(reason ? { reason } : {}) };
  return answer;
};
const signal = () => new AbortController().signal;
const escalations = (events: readonly unknown[]) =>
  (events as EventOf<'recovery.escalated'>[]).filter((e) => e.type === 'recovery.escalated').map((e) => e.data);

/** A process killed by a signal, with no exit code: nothing the classifier recognises (unknown). */
const CRASH: ExecResponder = () => ({
  status: 'failed',
  exitCode: null,
  signal: 'SIGSEGV',
  output: 'Segmentation fault',
});

/** Words that would ask a person to hand over a secret as text. */
const CREDENTIAL_PROMPT =
  /\b(enter|type|paste|provide|send|give|reply with|answer with)\b[^.]{0,40}\b(password|passphrase|token|api key|secret|credentials?)\b/i;

describe('recoverTask: escalation', () => {
  it.each([
    ['retry', choose('retry'), { kind: 'retry_task' }, 'retry'],
    ['skip', choose('skip'), { kind: 'skip' }, 'skip'],
    ['abort', choose('abort'), { kind: 'abort' }, 'abort'],
    ['a denial', deny('not now'), { kind: 'abort' }, 'abort'],
  ])('exhausted retries put the task to a person; %s is honoured', async (_name, answer, step, decision) => {
    const channel = scriptedChannel(answer);
    const { h, deps, delays } = recoveryHarness({ exec: () => ({ status: 'timeout' }), channel });
    const failure = await failedCall(h, { command: 'node scripts/health.js' });
    const from = h.log.events().length;

    expect(await recoverTask(failure, deps, signal())).toEqual(step);

    expect(delays).toEqual([5000, 30000]);
    expect(trail(h.log.events(), from).slice(-5)).toEqual([
      'recovery.applied:exhausted',
      'approval.requested:esc_t2_1',
      'recovery.escalated:requested',
      answer.decision === 'grant' ? 'approval.granted:esc_t2_1' : 'approval.denied:esc_t2_1',
      'recovery.escalated:decided',
    ]);
    const requested = h.log.events().find((e) => e.type === 'approval.requested') as EventOf<'approval.requested'>;
    const input = {
      taskId: 't2',
      title: 'Fetch the health endpoint',
      failureClass: 'transient',
      reason: channel.asked[0]?.reason,
      choices: ['retry', 'skip', 'abort'],
    };
    expect(requested.data).toMatchObject({
      tool: 'escalation',
      input,
      actionHash: actionHash({ name: 'escalation', input }),
      executionHash: actionHash({ name: 'escalation', input }),
      rule: 'plan:escalation',
      risk: ['transient'],
      shape: 'escalation',
    });
    expect(requested.data.reason).toContain('retry_transient has used its 2 retries');
    expect(channel.asked).toHaveLength(1);
    expect(channel.asked[0]).toMatchObject({ tool: 'escalation', requestId: requested.data.requestId, input });
    const [asked, decided] = escalations(h.log.events());
    expect(asked).toMatchObject({ status: 'requested', class: 'transient', requestId: requested.data.requestId });
    expect(decided).toMatchObject({
      status: 'decided',
      decision,
      by: 'user:test',
      requestId: requested.data.requestId,
    });
  });

  it('an unknown failure escalates at once: no retry, no wait', async () => {
    const channel = scriptedChannel(choose('skip'));
    const { h, deps, delays } = recoveryHarness({
      exec: CRASH,
      channel,
    });
    const failure = await failedCall(h, { command: 'node scripts/health.js' });
    const from = h.log.events().length;

    expect(await recoverTask(failure, deps, signal())).toEqual({ kind: 'skip' });

    expect(trail(h.log.events(), from)).toEqual([
      'failure.classified:unknown',
      'approval.requested:esc_t2_1',
      'recovery.escalated:requested',
      'approval.granted:esc_t2_1',
      'recovery.escalated:decided',
    ]);
    expect(delays).toEqual([]);
    expect(h.sandbox.executed()).toHaveLength(1);
    expect(channel.asked[0]?.reason).toContain('could not tell what kind of failure');
  });

  it('a permission failure asks for access set up outside the run, never for a credential as text', async () => {
    const channel = scriptedChannel(choose('retry', 'password: hunter2'));
    const { h, deps, delays } = recoveryHarness({
      exec: () => ({ exitCode: 22, output: 'HTTP/1.1 403 Forbidden' }),
      channel,
    });
    const failure = await failedCall(h, { command: 'node scripts/deploy.js' });

    const step = await recoverTask(failure, deps, signal());

    expect(step).toEqual({ kind: 'retry_task' });
    expect(delays).toEqual([]);
    expect(h.sandbox.executed()).toHaveLength(1); // not retried with the same (missing) access
    const reason = channel.asked[0]?.reason ?? '';
    expect(reason).toContain('--setup-env');
    expect(reason).toContain('config file');
    expect(reason).toContain('vault');
    expect(reason).toContain('then choose retry');
    expect(reason).not.toMatch(CREDENTIAL_PROMPT);
    for (const e of escalations(h.log.events())) expect(e.reason).not.toMatch(CREDENTIAL_PROMPT);
    // The matcher itself catches a prompt for a secret.
    expect('Please enter your password to continue').toMatch(CREDENTIAL_PROMPT);
    // The answer is a choice and nothing else: what the approver typed goes nowhere in plan events.
    expect(Object.keys(channel.asked[0]?.input as object).sort()).toEqual(
      ['choices', 'failureClass', 'reason', 'taskId', 'title'].sort(),
    );
    const planEvents = h.log.events().filter((e) => e.type.startsWith('recovery.') || e.type.startsWith('failure.'));
    expect(JSON.stringify(planEvents)).not.toContain('hunter2');
  });

  it('a grant from a channel that offers no choice means retry, and is recorded as retry', async () => {
    const channel = scriptedChannel(grant('run'));
    const { h, deps } = recoveryHarness({ exec: CRASH, channel });
    expect(await recoverTask(await failedCall(h, { command: 'node a.js' }), deps, signal())).toEqual({
      kind: 'retry_task',
    });
    const granted = h.log.events().find((e) => e.type === 'approval.granted') as EventOf<'approval.granted'>;
    // Once, not for the run: a choice never stands for a later escalation.
    expect(granted.data).toMatchObject({ choice: 'retry', scope: 'once' });
    expect(h.tracker.state.approvals.approvedShapes.has('escalation')).toBe(false);
  });

  it('escalations of a task are numbered: esc_<taskId>_<n>', async () => {
    const channel = scriptedChannel(choose('retry'), choose('skip'));
    const { h, deps } = recoveryHarness({ exec: CRASH, channel });
    expect(await recoverTask(await failedCall(h, { command: 'node a.js' }), deps, signal())).toEqual({
      kind: 'retry_task',
    });
    expect(await recoverTask(await failedCall(h, { command: 'node a.js' }), deps, signal())).toEqual({ kind: 'skip' });
    expect(channel.asked.map((p) => (p.input as { taskId: string }).taskId)).toEqual(['t2', 't2']);
    expect(Object.values(h.tracker.state.approvals.requests).map((r) => r.callId)).toEqual(['esc_t2_1', 'esc_t2_2']);
  });
});

describe('escalation without a person now', () => {
  it('headless pause leaves the request pending; on resume the recorded answer decides, once', async () => {
    const { h, deps } = recoveryHarness({
      exec: CRASH,
      channel: headlessChannel('pause'),
    });
    const step = await recoverTask(await failedCall(h, { command: 'node a.js' }), deps, signal());
    expect(step.kind).toBe('pending');
    const requestId = (step as { requestId: string }).requestId;
    expect(h.tracker.state.approvals.requests[requestId]).toMatchObject({ tool: 'escalation', status: 'pending' });
    expect(trail(h.log.events()).at(-1)).toBe('recovery.escalated:requested');
    expect(h.log.isDurable(h.log.events().at(-1)!.id)).toBe(true);
    expect(decidedEscalation(requestId, deps)).toBeUndefined();

    // `gatehouse plan decide RUN REQUEST skip` writes the answer; the run resumes with a fresh tracker.
    const request = h.tracker.state.approvals.requests[requestId]!;
    const resumed = harness({ resume: { events: h.log.events(), sandbox: h.sandbox } });
    record(resumed.deps, 'approval.granted', 'user', {
      requestId,
      callId: request.callId,
      actionHash: request.actionHash,
      executionHash: request.executionHash,
      scope: 'once',
      approver: 'user:cli',
      channel: 'cli',
      reason: '',
      choice: 'skip',
    });
    const again = { log: resumed.log, tracker: resumed.tracker };
    expect(decidedEscalation(requestId, again)).toEqual({ kind: 'skip' });
    expect(decidedEscalation(requestId, again)).toEqual({ kind: 'skip' }); // a second resume
    const decided = escalations(resumed.log.events()).filter((e) => e.status === 'decided');
    expect(decided).toEqual([expect.objectContaining({ decision: 'skip', by: 'user:cli', requestId })]);
  });

  it('a denial on record is abort; an unknown request id decides nothing', async () => {
    const { h, deps } = recoveryHarness({
      exec: CRASH,
      channel: headlessChannel('pause'),
    });
    const step = (await recoverTask(await failedCall(h, { command: 'node a.js' }), deps, signal())) as {
      requestId: string;
    };
    const request = h.tracker.state.approvals.requests[step.requestId]!;
    record(deps, 'approval.denied', 'user', {
      requestId: step.requestId,
      callId: request.callId,
      actionHash: request.actionHash,
      approver: 'user:cli',
      channel: 'cli',
      reason: 'stop',
    });
    expect(decidedEscalation(step.requestId, deps)).toEqual({ kind: 'abort' });
    expect(decidedEscalation('apr_nosuchrequest', deps)).toBeUndefined();
  });

  it('headless deny and no channel at all both stop the plan', async () => {
    for (const channel of [headlessChannel('deny'), undefined]) {
      const { h, deps } = recoveryHarness({
        exec: CRASH,
        ...(channel ? { channel } : {}),
      });
      expect(await recoverTask(await failedCall(h, { command: 'node a.js' }), deps, signal())).toEqual({
        kind: 'abort',
      });
      expect(trail(h.log.events()).slice(-2)).toEqual(['approval.denied:esc_t2_1', 'recovery.escalated:decided']);
    }
  });
});
