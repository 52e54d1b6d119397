import { describe, expect, it } from 'vitest';
import type { RecoveryChoice } from '@gatehouse/shared';
import { pause, policyOf, scriptedChannel } from '../tools/pipeline-harness';
import { complete, ofType, planStretch, planWorld, toolCall, type PlanWorld } from './plan-run-harness';

/**
 * Red team (plan mode): stopping and resuming. A person's decision on an escalation, written to the
 * log while the run is paused (`gatehouse plan decide`), is what the resumed run does: the failure
 * it answered is not escalated again, and nothing already done runs twice.
 */
const POLICY = policyOf({ mode: 'sandboxed-auto', allow: ['submit_plan'] });
const PLAN = [
  { id: 't1', title: 'Read src/a.js to see what it exports', tools: ['read_file'], check: 'node --test' },
  { id: 't2', title: 'Rewrite docs/b.md to describe src/a.js', dependsOn: ['t1'], paths: ['docs/**'] },
  { id: 't3', title: 'List the files under src to check nothing else changed' },
];
const read = toolCall('read_file', { path: 'src/a.js' });
const done1 = complete('t1', 'src/a.js holds a (obs-2).');
const SCRIPT = {
  turns: [
    toolCall('submit_plan', { tasks: PLAN }),
    read,
    done1,
    done1,
    toolCall('list_files', { path: 'src' }),
    complete('t3', 'src holds a.js (obs-6).'),
    { final: 'stop' },
  ],
};

/** What `gatehouse plan decide RUN REQUEST CHOICE` appends to a paused run's log. */
function decide(w: PlanWorld, requestId: string, choice: RecoveryChoice): void {
  const req = ofType(w, 'approval.requested').find((e) => e.data.requestId === requestId)!;
  w.log.append(
    'approval.granted',
    'user',
    {
      requestId,
      callId: req.data.callId,
      actionHash: req.data.actionHash,
      executionHash: req.data.executionHash,
      scope: 'once',
      approver: 'user:test',
      channel: 'cli',
      reason: '',
      choice,
    },
    { causationId: req.id },
  );
}

describe('red team: resuming a plan run', () => {
  it('a failed check escalated and decided "skip" while paused: resumed, it is skipped, nothing asked', async () => {
    const w = planWorld({ exec: () => ({ exitCode: 1, output: 'not ok 1\n' }) });
    const first = await planStretch(w, SCRIPT, { policy: POLICY, channel: scriptedChannel(pause) });
    expect(first).toMatchObject({ status: 'paused' });
    const [asked] = ofType(w, 'recovery.escalated');
    expect(asked?.data).toMatchObject({ taskId: 't1', status: 'requested' });
    decide(w, asked!.data.requestId!, 'skip');

    const channel = scriptedChannel();
    const outcome = await planStretch(w, SCRIPT, { policy: POLICY, channel, resume: true });
    expect(channel.asked).toEqual([]);
    expect(ofType(w, 'recovery.escalated').map((e) => [e.data.status, e.data.decision])).toEqual([
      ['requested', undefined],
      ['decided', 'skip'],
    ]);
    // The check ran for each complete_task, never again on resume.
    expect(w.commands).toEqual(['node --test', 'node --test']);
    expect(ofType(w, 'task.started').map((e) => e.data.taskId)).toEqual(['t1', 't3']);
    expect(ofType(w, 'plan.completed').map((e) => e.data)).toMatchObject([
      { completed: ['t3'], failed: [], skipped: ['t1', 't2'] },
    ]);
    expect(outcome).toMatchObject({ status: 'partial', stopReason: 'plan_incomplete' });
  });

  it('decided "abort" while paused: resumed headless, the plan ends, no new escalation', async () => {
    const w = planWorld({ exec: () => ({ exitCode: 1, output: 'not ok 1\n' }) });
    await planStretch(w, SCRIPT, { policy: POLICY, channel: scriptedChannel(pause) });
    decide(w, ofType(w, 'recovery.escalated')[0]!.data.requestId!, 'abort');

    const outcome = await planStretch(w, SCRIPT, { policy: POLICY, channel: scriptedChannel(pause), resume: true });
    expect(outcome).toMatchObject({ status: 'partial', stopReason: 'plan_aborted' });
    expect(ofType(w, 'approval.requested').filter((e) => e.data.tool === 'escalation')).toHaveLength(1);
    expect(ofType(w, 'task.started').map((e) => e.data.taskId)).toEqual(['t1']);
  });

  it('a denied call escalated and decided "skip" while paused is not escalated again on resume', async () => {
    const w = planWorld();
    const tasks = [{ ...PLAN[0], check: undefined, tools: ['read_file', 'bash'] }, PLAN[1], PLAN[2]];
    const script = {
      turns: [
        toolCall('submit_plan', { tasks }),
        toolCall('bash', { command: 'rm -rf src' }),
        toolCall('list_files', { path: 'src' }),
        complete('t3', 'src holds a.js (obs-3).'),
        { final: 'stop' },
      ],
    };
    const policy = policyOf({ mode: 'sandboxed-auto', allow: ['submit_plan'], deny: ['bash(rm *)'] });
    await planStretch(w, script, { policy, channel: scriptedChannel(pause) });
    const asked = ofType(w, 'recovery.escalated');
    expect(asked.map((e) => [e.data.taskId, e.data.class, e.data.status])).toEqual([['t1', 'permission', 'requested']]);
    decide(w, asked[0]!.data.requestId!, 'skip');

    const outcome = await planStretch(w, script, { policy, channel: scriptedChannel(pause), resume: true });
    expect(ofType(w, 'approval.requested').filter((e) => e.data.tool === 'escalation')).toHaveLength(1);
    expect(ofType(w, 'task.started').map((e) => e.data.taskId)).toEqual(['t1', 't3']);
    expect(outcome).toMatchObject({ status: 'partial', stopReason: 'plan_incomplete' });
  });
});
