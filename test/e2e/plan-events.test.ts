import { afterEach, describe, expect, it } from 'vitest';
import {
  call,
  cleanScratch,
  done,
  fix,
  FIX_PLAN,
  gatehouse,
  logOf,
  of,
  PEOPLE_APPROVE_PLANS,
  plan,
  read,
  resume,
  submit,
  type Event,
} from '../support/plan-cli';

/**
 * Plan mode's log end to end (issue 15): every state change of a plan run is an event, in order;
 * `gatehouse show` and `gatehouse report` render them. Also: a new plan submitted during execution
 * stops it and goes back to the gate.
 */
afterEach(cleanScratch);

const PLAN_EVENTS = new Set([
  'run.started',
  'plan.created',
  'plan.gate',
  'approval.requested',
  'approval.granted',
  'run.paused',
  'run.resumed',
  'task.started',
  'task.completed',
  'task.failed',
  'failure.classified',
  'recovery.applied',
  'recovery.escalated',
  'plan.completed',
  'run.completed',
]);
/** The plan's state changes, each with what tells it apart. */
const sequence = (log: Event[]) =>
  log
    .filter((e) => PLAN_EVENTS.has(e.type))
    .map((e) => {
      const d = e.data as Record<string, string | number | undefined>;
      const detail = d.status ?? d.outcome ?? d.class ?? d.taskId ?? d.version;
      const task = d.taskId !== undefined && detail !== d.taskId ? `${d.taskId}:` : '';
      return detail === undefined ? e.type : `${e.type} ${task}${detail}`;
    });

describe('gatehouse plan: the log, show and report (real sandbox, scripted model)', () => {
  it('one full run: every state change in order; show and report render the plan', () => {
    const r = plan({
      turns: [
        submit(FIX_PLAN),
        read,
        done('t1', 'add() in src/math.js subtracts (obs-2).'),
        done('t2', 'add() in src/math.js was read (obs-2).'), // its check fails: logic, feedback
        fix,
        done('t2', 'Changed add() in src/math.js to add (obs-6).'),
        call('bash', { command: 'node --test' }),
        done('t3', 'The tests pass (obs-9).'),
      ],
      policy: PEOPLE_APPROVE_PLANS,
    });
    expect(r.status, r.stderr).toBe(3);
    expect(gatehouse(['plan', 'approve', r.runId, '--state-dir', r.stateDir]).status).toBe(0);
    const resumed = resume(r);
    expect(resumed.status, resumed.stderr).toBe(0);
    const log = logOf(r);
    expect(sequence(log)).toEqual([
      'run.started',
      'approval.requested',
      'plan.created 1',
      'plan.gate requested',
      'run.paused',
      'approval.granted',
      'run.resumed',
      'plan.gate approved',
      'task.started t1',
      'task.completed t1',
      'task.started t2',
      'failure.classified t2:logic',
      'recovery.applied t2:retrying',
      'recovery.applied t2:succeeded',
      'task.completed t2',
      'task.started t3',
      'task.completed t3',
      'plan.completed',
      'run.completed final',
    ]);
    // The failure's evidence, the recipe's attempt, the summary: the details, not only the steps.
    expect(of(log, 'recovery.applied')).toMatchObject([
      { recipe: 'feedback_logic', attempt: 1, maxAttempts: 1, outcome: 'retrying' },
      { recipe: 'feedback_logic', attempt: 1, maxAttempts: 1, outcome: 'succeeded' },
    ]);
    expect(of(log, 'plan.completed')).toMatchObject([{ summary: '3/3 tasks completed. 0 failures.' }]);
    // Every call of the run came to an observation (none was left without one).
    const intents = log.filter((e) => e.type === 'tool.intent').map((e) => e.data.callId);
    const observed = new Set(log.filter((e) => e.type === 'tool.observation').map((e) => e.data.callId));
    expect(intents.filter((id) => !observed.has(id))).toEqual([]);

    const show = gatehouse(['show', r.runId, '--state-dir', r.stateDir]);
    expect(show.status, show.stderr).toBe(0);
    const shown = show.stdout;
    expect(shown).toMatch(/\[Task 1\/3\] ✓ Read src\/math\.js to find why add\(\) is wrong/);
    expect(shown).toMatch(/\[Task 2\/3\] ✓ Change add\(\) in src\/math\.js to return a \+ b: Changed add\(\)/);
    expect(shown).toMatch(/logic/);
    expect(shown).toMatch(/feedback_logic/);
    expect(shown).toMatch(/3\/3 tasks completed\. 0 failures\./);

    const md = gatehouse(['report', r.runId, '--state-dir', r.stateDir]);
    expect(md.status, md.stderr).toBe(0);
    expect(md.stdout).toMatch(/plan/i);
    expect(md.stdout).toMatch(/3\/3 tasks completed\. 0 failures\./);
    expect(md.stdout).toMatch(/feedback_logic/);
    const report = gatehouse(['report', r.runId, '--state-dir', r.stateDir, '--format', 'json']);
    expect(report.status, report.stderr).toBe(0);
    const planPart = (JSON.parse(report.stdout) as { plan: Record<string, unknown> }).plan;
    expect(planPart).toMatchObject({ summary: '3/3 tasks completed. 0 failures.', aborted: false });
    expect((planPart.tasks as { id: string; status: string }[]).map((t) => [t.id, t.status])).toEqual([
      ['t1', 'completed'],
      ['t2', 'completed'],
      ['t3', 'completed'],
    ]);
    expect(planPart.failures).toMatchObject([{ taskId: 't2', class: 'logic' }]);
    expect((planPart.recoveries as unknown[]).length).toBe(2);
  });

  it('a new plan submitted during execution stops it and returns to the gate; the new plan runs once approved', () => {
    const NEW = FIX_PLAN.map((t) => ({
      ...t,
      id: t.id.replace('t', 'u'),
      dependsOn: (t.dependsOn ?? []).map((d) => d.replace('t', 'u')),
    }));
    const r = plan({
      turns: [
        submit(FIX_PLAN),
        read, // t1
        submit(NEW), // during t1: back to the gate
        read,
        done('u1', 'add() in src/math.js subtracts (obs-4).'),
        fix,
        done('u2', 'Changed add() in src/math.js to add (obs-6).'),
        call('bash', { command: 'node --test' }),
        done('u3', 'The tests pass (obs-9).'),
      ],
      policy: PEOPLE_APPROVE_PLANS,
    });
    expect(r.status, r.stderr).toBe(3);
    const at = ['--state-dir', r.stateDir];
    expect(gatehouse(['plan', 'approve', r.runId, ...at]).status).toBe(0);
    const during = resume(r);
    expect(during.status, during.stderr).toBe(3);
    let log = logOf(r);
    expect(of(log, 'plan.created').map((d) => [d.version, d.callId])).toEqual([
      [1, 'call_0_0'],
      [2, 'call_2_0'],
    ]);
    expect(of(log, 'plan.gate').map((d) => d.status)).toEqual(['requested', 'approved', 'requested']);
    // Execution stopped where the new plan came: t1 started, nothing after it.
    expect(of(log, 'task.started').map((d) => d.taskId)).toEqual(['t1']);
    expect(of(log, 'task.completed')).toEqual([]);
    expect(gatehouse(['plan', 'approve', r.runId, ...at]).status).toBe(0);
    const after = resume(r);
    expect(after.status, after.stderr).toBe(0);
    log = logOf(r);
    expect(of(log, 'task.started').map((d) => d.taskId)).toEqual(['t1', 'u1', 'u2', 'u3']);
    // The replaced plan's end is on record too, with how far it got (t1 was running: neither done nor failed).
    expect(of(log, 'plan.completed')).toMatchObject([
      {
        planId: of(log, 'plan.created')[0]!.planId,
        completed: [],
        failed: [],
        summary:
          'Replaced by a new plan (v2) while t1 was in progress. 0/3 tasks completed. 0 failures. Skipped: t2, t3.',
      },
      { planId: of(log, 'plan.created')[1]!.planId, completed: ['u1', 'u2', 'u3'] },
    ]);
    expect(log.at(-1)).toMatchObject({ data: { status: 'final', answer: '3/3 tasks completed. 0 failures.' } });
  });
});
