import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanScratch,
  done,
  FAST_RECOVERY,
  gatehouse,
  json,
  logOf,
  of,
  pendingRequest,
  plan,
  read,
  READS,
  resume,
  submit,
  write,
  type PlanRun,
} from '../support/plan-cli';

/**
 * Escalation through the real CLI, headless (issue 15): a failure recovery cannot settle pauses the
 * run (exit 3); `gatehouse plan decide RUN REQUEST retry|skip|abort` answers it and `gatehouse
 * resume RUN` acts on the answer: retry runs the task again, skip skips it and the tasks that need
 * it, abort ends the plan. Retries that are used up escalate too.
 */
afterEach(cleanScratch);

const POLICY = {
  mode: 'confirm-novel',
  allow: ['submit_plan', ...READS, 'bash(test -e*)', 'bash(grep -qx*)', 'bash(kill*)'],
};
const file = (x: string, check: string, dependsOn: string[] = []) => ({
  id: `t${x}`,
  title: `Create ${x}.txt containing the letter ${x}`,
  tools: ['write_file', 'read_file'],
  paths: [`${x}.txt`],
  dependsOn,
  check,
});
/** ta's check is killed by a signal while a.txt is missing: a failure nobody recognises (unknown). */
const PLAN = [
  file('a', 'test -e a.txt || kill -9 $$'),
  file('b', 'grep -qx b b.txt', ['ta']),
  file('c', 'grep -qx c c.txt'),
];
const FAILS_TA = [submit(PLAN), read, done('ta', 'src/math.js was read (obs-2).')];
const config = () => ['--config', json('config.json', FAST_RECOVERY)];

function decide(r: PlanRun, choice: string) {
  const requestId = pendingRequest(logOf(r), 'escalation');
  return { requestId, ...gatehouse(['plan', 'decide', r.runId, requestId, choice, '--state-dir', r.stateDir]) };
}
const attempts = (r: PlanRun) => of(logOf(r), 'task.started').map((d) => `${String(d.taskId)}#${String(d.attempt)}`);

describe('gatehouse plan: escalation, headless (real sandbox, scripted model)', () => {
  it('retry: the task runs again from its start, then the plan goes on', () => {
    const r = plan({
      turns: [
        ...FAILS_TA,
        write('a.txt', 'a\n'),
        done('ta', 'Wrote a.txt (obs-5).'),
        write('b.txt', 'b\n'),
        done('tb', 'Wrote b.txt (obs-8).'),
        write('c.txt', 'c\n'),
        done('tc', 'Wrote c.txt (obs-11).'),
      ],
      policy: POLICY,
      extra: config(),
    });
    expect(r.status, r.stderr).toBe(3);
    expect(of(r.events, 'recovery.escalated')).toMatchObject([{ taskId: 'ta', class: 'unknown', status: 'requested' }]);
    const bad = gatehouse([
      'plan',
      'decide',
      r.runId,
      pendingRequest(r.events, 'escalation'),
      'later',
      '--state-dir',
      r.stateDir,
    ]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/must be retry, skip or abort/);
    const d = decide(r, 'retry');
    expect(d.status, d.stderr).toBe(0);
    const resumed = resume(r);
    expect(resumed.status, resumed.stderr).toBe(0);
    const log = logOf(r);
    expect(of(log, 'recovery.escalated')).toMatchObject([
      { status: 'requested', requestId: d.requestId },
      { status: 'decided', requestId: d.requestId, decision: 'retry' },
    ]);
    expect(attempts(r)).toEqual(['ta#1', 'ta#2', 'tb#1', 'tc#1']);
    expect(of(log, 'plan.completed')).toMatchObject([
      { completed: ['ta', 'tb', 'tc'], failed: [], skipped: [], summary: '3/3 tasks completed. 0 failures.' },
    ]);
  });

  it('skip: the task and the tasks that depend on it are skipped; the others run', () => {
    const r = plan({
      turns: [...FAILS_TA, write('c.txt', 'c\n'), done('tc', 'Wrote c.txt (obs-5).')],
      policy: POLICY,
      extra: config(),
    });
    expect(r.status, r.stderr).toBe(3);
    const d = decide(r, 'skip');
    expect(d.status, d.stderr).toBe(0);
    const resumed = resume(r);
    const log = logOf(r);
    expect(of(log, 'recovery.escalated').at(-1)).toMatchObject({ status: 'decided', decision: 'skip' });
    expect(attempts(r)).toEqual(['ta#1', 'tc#1']);
    expect(log.some((e) => e.type === 'tool.intent' && e.data.taskId === 'tb')).toBe(false);
    expect(of(log, 'plan.completed')).toMatchObject([
      {
        completed: ['tc'],
        failed: [],
        skipped: ['ta', 'tb'],
        summary: '1/3 tasks completed. 0 failures. Skipped: ta, tb.',
      },
    ]);
    expect(resumed.status, resumed.stderr).toBe(4);
    expect(log.at(-1)).toMatchObject({ data: { status: 'partial', stopReason: 'plan_incomplete' } });
  });

  it('exhausted retries escalate; abort ends the plan: the task failed, the rest not run', () => {
    const r = plan({
      turns: [
        submit(PLAN.map((t) => (t.id === 'ta' ? { ...t, check: 'grep -qx a a.txt' } : t))),
        read,
        done('ta', 'src/math.js was read (obs-2).'), // check fails: logic, one retry with feedback
        done('ta', 'src/math.js was read (obs-2).'), // fails again: the retry is used up
      ],
      policy: POLICY,
      extra: config(),
    });
    expect(r.status, r.stderr).toBe(3);
    const trail = r.events
      .filter((e) => ['failure.classified', 'recovery.applied', 'recovery.escalated'].includes(e.type))
      .map((e) => `${e.type}:${String(e.data.class)}:${String(e.data.outcome ?? e.data.status)}`);
    expect(trail).toEqual([
      'failure.classified:logic:undefined',
      'recovery.applied:logic:retrying',
      'recovery.applied:logic:failed',
      'failure.classified:logic:undefined',
      'recovery.applied:logic:exhausted',
      'recovery.escalated:logic:requested',
    ]);
    const request = of(r.events, 'approval.requested').find((d) => d.tool === 'escalation')!;
    expect((request.input as { reason: string }).reason).toMatch(/Recipe feedback_logic has used its 1 retry/);
    const d = decide(r, 'abort');
    expect(d.status, d.stderr).toBe(0);
    const resumed = resume(r);
    const log = logOf(r);
    expect(of(log, 'recovery.escalated').at(-1)).toMatchObject({ status: 'decided', decision: 'abort' });
    expect(attempts(r)).toEqual(['ta#1']);
    expect(of(log, 'task.failed')).toMatchObject([{ taskId: 'ta' }]);
    expect(of(log, 'plan.completed')).toMatchObject([
      {
        completed: [],
        failed: ['ta'],
        skipped: ['tb', 'tc'],
        aborted: true,
        summary: '0/3 tasks completed. 1 failure (ta). Skipped: tb, tc. Aborted.',
      },
    ]);
    expect(resumed.status, resumed.stderr).toBe(4);
    expect(log.at(-1)).toMatchObject({ data: { status: 'partial', stopReason: 'plan_aborted' } });
    // Answered once: a second decision is refused, and nothing more is recorded.
    const again = gatehouse(['plan', 'decide', r.runId, d.requestId, 'retry', '--state-dir', r.stateDir]);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/already/);
  });
});
