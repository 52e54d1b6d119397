import { afterEach, describe, expect, it } from 'vitest';
import {
  call,
  cleanScratch,
  done,
  fix,
  FIX_PLAN,
  gatehouse,
  lastContext,
  logOf,
  of,
  PEOPLE_APPROVE_PLANS,
  pendingRequest,
  plan,
  read,
  resume,
  submit,
} from '../support/plan-cli';

/**
 * `gatehouse plan` end to end, planning and the gate (issue 15): the built CLI, a real sandbox, a
 * scripted model. A plan that fails validation is a rejected observation naming the problem, which
 * the model revises; the answers `plan approve|reject|ask` from another terminal reach the run.
 */
afterEach(cleanScratch);

const VAGUE = FIX_PLAN.map((t) => (t.id === 't3' ? { ...t, title: 'clean code' } : t));
const EIGHT = Array.from({ length: 8 }, (_, i) => ({
  id: `t${i + 1}`,
  title: `Write line ${i + 1} of notes.txt with the text step ${i + 1}`,
}));
const CYCLIC = FIX_PLAN.map((t) => (t.id === 't1' ? { ...t, dependsOn: ['t2'] } : t));
const observationOf = (events: ReturnType<typeof logOf>, callId: string) =>
  events.find((e) => e.type === 'tool.observation' && e.data.callId === callId)?.data;

describe('gatehouse plan: validation and the gate (real sandbox, scripted model)', () => {
  it('vague, oversized and cyclic plans are rejected naming the problem; the revised plan reaches the gate', () => {
    const r = plan({
      turns: [submit(VAGUE), submit(EIGHT), submit(CYCLIC), submit(FIX_PLAN)],
      policy: PEOPLE_APPROVE_PLANS,
    });
    // The revised plan waits for a person: headless, the run pauses.
    expect(r.status, r.stderr).toBe(3);
    const vague = observationOf(r.events, 'call_0_0');
    expect(vague).toMatchObject({ outcome: 'rejected' });
    expect(String(vague?.content)).toMatch(/task 3 \(t3\).*vague/is);
    const eight = observationOf(r.events, 'call_1_0');
    expect(eight).toMatchObject({ outcome: 'rejected' });
    expect(String(eight?.content)).toMatch(/the plan has 8 tasks; a plan has 3 to 7/);
    const cyclic = observationOf(r.events, 'call_2_0');
    expect(cyclic).toMatchObject({ outcome: 'rejected' });
    expect(String(cyclic?.content)).toMatch(/dependency cycle t1 → t2 → t1/);
    // Refused plans are never created and never reach the gate; the revision is plan version 1.
    for (const id of ['call_0_0', 'call_1_0', 'call_2_0']) {
      const refused = r.events.find((e) => e.type === 'tool.validation' && e.data.callId === id);
      expect(refused?.data).toMatchObject({ ok: false });
      expect(r.events.some((e) => e.type === 'approval.requested' && e.data.callId === id)).toBe(false);
    }
    expect(of(r.events, 'plan.created')).toMatchObject([{ callId: 'call_3_0', version: 1 }]);
    expect(of(r.events, 'plan.gate')).toMatchObject([{ status: 'requested' }]);
    expect(of(r.events, 'task.started')).toEqual([]);
    // Each refusal was shown to the model before its next submission.
    expect(lastContext(r.events)).toContain('dependency cycle t1 → t2 → t1');
  });

  it('plan approve: a reorder against a dependency and a vague edit are refused naming it; an edit is applied', () => {
    const r = plan({
      turns: [
        submit(FIX_PLAN),
        read,
        done('t1', 'add() in src/math.js subtracts (obs-2).'),
        fix,
        done('t2', 'Changed add() in src/math.js to add (obs-4).'),
        call('bash', { command: 'node --test' }),
        done('t3', 'The tests pass (obs-7).'),
      ],
      policy: PEOPLE_APPROVE_PLANS,
    });
    expect(r.status, r.stderr).toBe(3);
    const at = ['--state-dir', r.stateDir];
    const reorder = gatehouse(['plan', 'approve', r.runId, '--order', 't2,t1,t3', ...at]);
    expect(reorder.status).toBe(1);
    expect(reorder.stderr).toMatch(/t2 depends on t1, which the new order puts after it/);
    expect(reorder.stderr).toMatch(/nothing was recorded/);
    const vague = gatehouse(['plan', 'approve', r.runId, '--edit', 't2=make it faster', ...at]);
    expect(vague.status).toBe(1);
    expect(vague.stderr).toMatch(/the new title of t2/);
    const unknown = gatehouse(['plan', 'approve', r.runId, '--skip', 't9', ...at]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/there is no task "t9"/);
    // Nothing of the refused answers is on record: the plan still waits.
    expect(logOf(r).filter((e) => e.type.startsWith('approval.') && e.type !== 'approval.requested')).toEqual([]);

    const title = 'Change add() in src/math.js so that it returns a + b';
    const edited = gatehouse(['plan', 'approve', r.runId, '--edit', `t2=${title}`, ...at]);
    expect(edited.status, edited.stderr).toBe(0);
    const resumed = resume(r);
    expect(resumed.status, resumed.stderr).toBe(0);
    const log = logOf(r);
    expect(of(log, 'plan.gate').at(-1)).toMatchObject({ status: 'modified', changes: { edit: { t2: title } } });
    expect(of(log, 'task.started').map((d) => [d.taskId, d.title])).toEqual([
      ['t1', FIX_PLAN[0]!.title],
      ['t2', title],
      ['t3', FIX_PLAN[2]!.title],
    ]);
    expect(log.at(-1)).toMatchObject({ data: { status: 'final', answer: '3/3 tasks completed. 0 failures.' } });
  });

  it('plan reject and plan ask reach the model, which revises; the approved revision runs to the end', () => {
    const ANSWERED = FIX_PLAN.map((t) =>
      t.id === 't3' ? { ...t, title: 'Run node --test: t2 must pass it first' } : t,
    );
    const r = plan({
      turns: [
        submit(FIX_PLAN), // rejected by a person
        submit(FIX_PLAN.map((t) => (t.id === 't3' ? { ...t, title: 'Run node --test and report the result' } : t))),
        submit(ANSWERED), // after the question
        read,
        done('t1', 'add() in src/math.js subtracts (obs-4).'),
        fix,
        done('t2', 'Changed add() in src/math.js to add (obs-6).'),
        call('bash', { command: 'node --test' }),
        done('t3', 'The tests pass (obs-9).'),
      ],
      policy: PEOPLE_APPROVE_PLANS,
    });
    expect(r.status, r.stderr).toBe(3);
    const at = ['--state-dir', r.stateDir];
    const reason = 'Say which command proves the suite passes';
    const rejected = gatehouse(['plan', 'reject', r.runId, '--reason', reason, ...at]);
    expect(rejected.status, rejected.stderr).toBe(0);
    const second = resume(r);
    // The model saw the reason and submitted a revised plan: the gate again.
    expect(second.status, second.stderr).toBe(3);
    let log = logOf(r);
    expect(of(log, 'plan.gate').map((d) => d.status)).toEqual(['requested', 'rejected', 'requested']);
    expect(of(log, 'plan.gate')[1]).toMatchObject({ reason });
    expect(lastContext(log)).toContain(`The plan was rejected (by user:`);
    expect(lastContext(log)).toContain(reason);
    expect(of(log, 'plan.created').map((d) => d.version)).toEqual([1, 2]);

    const question = 'Why does t3 need t2 first?';
    const asked = gatehouse(['plan', 'ask', r.runId, '--question', question, ...at]);
    expect(asked.status, asked.stderr).toBe(0);
    const third = resume(r);
    expect(third.status, third.stderr).toBe(3);
    log = logOf(r);
    expect(of(log, 'plan.gate').at(-2)).toMatchObject({ status: 'clarification', reason: question });
    expect(lastContext(log)).toContain(`The approver asks about your plan`);
    expect(lastContext(log)).toContain(question);
    expect(of(log, 'plan.created').map((d) => d.version)).toEqual([1, 2, 3]);

    const approved = gatehouse(['plan', 'approve', r.runId, ...at]);
    expect(approved.status, approved.stderr).toBe(0);
    expect(pendingRequest(log, 'submit_plan')).toBe(of(log, 'plan.gate').at(-1)!.requestId);
    const last = resume(r);
    expect(last.status, last.stderr).toBe(0);
    log = logOf(r);
    expect(of(log, 'plan.gate').map((d) => d.status)).toEqual([
      'requested',
      'rejected',
      'requested',
      'clarification',
      'requested',
      'approved',
    ]);
    expect(of(log, 'task.completed').map((d) => d.taskId)).toEqual(['t1', 't2', 't3']);
    expect(log.at(-1)).toMatchObject({ data: { status: 'final', answer: '3/3 tasks completed. 0 failures.' } });
  });
});
