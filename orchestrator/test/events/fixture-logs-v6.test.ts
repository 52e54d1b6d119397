import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { EventData, isEvent, type EventEnvelope } from '@gatehouse/shared';
import { LogKey } from '../../src/events/key';
import { RunLog } from '../../src/events/index';
import { auditRun } from '../../src/events/audit';
import { explainRun } from '../../src/events/explain';
import { planAccount } from '../../src/events/plan-account';
import { fold } from '../../src/events/state';
import { recordedCalls } from '../../src/replay/recorded-calls';
import { replayRun } from '../../src/replay/replay-run';
import { planLines } from '../../src/cli/plan-lines';

/**
 * What schema version 6 added, as the v6 fixture's plan run holds it: one run of the real `gatehouse plan`
 * (test/fixtures/logs/generate.mjs), headless, answered by `gatehouse plan approve` and `plan decide`: a
 * rejected plan, the plan paused at the gate, approved with changes, tasks with their ids, a check passed,
 * a deviation refused, a check failing (logic) retried with feedback and failing again, escalated (an
 * approval request with no tool call behind it), the person's skip, the dependent task skipped, the summary.
 * fixture-logs.test.ts runs the older checks (verify, show, the fold) over every v6 run.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const fixtures = path.join(root, 'test/fixtures/logs');
const runs = JSON.parse(readFileSync(path.join(fixtures, 'v6', 'runs.json'), 'utf8')) as Record<
  string,
  { runId: string; exit: number; runs: string[] }
>;

const temps: string[] = [];
afterAll(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});
function copy(): { state: string; key: LogKey } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-fixture-v6-'));
  temps.push(dir);
  cpSync(path.join(fixtures, 'v6'), dir, { recursive: true });
  const keyFile = path.join(dir, 'key', 'log.key');
  chmodSync(keyFile, 0o600);
  return { state: path.join(dir, 'state'), key: LogKey.load({ env: { GATEHOUSE_KEY_FILE: keyFile } }) };
}
const planRun = (): { events: EventEnvelope[]; state: string; key: LogKey } => {
  const c = copy();
  return { ...c, events: RunLog.readEvents(c.state, runs.plan!.runId) };
};
const types = (events: EventEnvelope[]) => events.map((e) => e.type);

describe('fixture logs v6: a plan run', () => {
  it('every line parses against its schema, the run verifies, and the fold ends it partial', () => {
    const { events, state, key } = planRun();
    const lines = readFileSync(path.join(state, 'runs', runs.plan!.runId, 'events.jsonl'), 'utf8')
      .trimEnd()
      .split('\n');
    expect(lines).toHaveLength(events.length);
    for (const line of lines) {
      const e = JSON.parse(line) as { type: keyof typeof EventData; data: unknown; schemaVersion: number };
      expect(e.schemaVersion).toBe(6);
      expect(EventData[e.type].safeParse(e.data).success).toBe(true);
    }
    const audit = auditRun(state, runs.plan!.runId, key);
    expect({ verdict: audit.verdict, problems: audit.problems }).toEqual({ verdict: 'intact', problems: [] });
    // Not every task of the plan completed: partial, the summary as its answer.
    expect(fold(events)).toMatchObject({ status: 'partial', stopReason: 'plan_incomplete' });
    expect(events[0]!.data).toMatchObject({ planMode: true });
  });

  it('one run made by three commands: paused at the gate (3), paused on the escalation (3), partial (4)', () => {
    const { events } = planRun();
    const id = runs.plan!.runId;
    expect([runs.planGate, runs.planEscalated, runs.plan]).toEqual([
      { runId: id, exit: 3, runs: [id] },
      { runId: id, exit: 3, runs: [] },
      { runId: id, exit: 4, runs: [] },
    ]);
    const steps = events.filter((e) => /^run\.(paused|resumed|completed)$|^approval\.granted$/.test(e.type));
    expect(steps.map((e) => [e.type, 'callId' in e.data ? e.data.callId : undefined])).toEqual([
      ['run.paused', undefined],
      ['approval.granted', 'call_1_0'],
      ['run.resumed', undefined],
      ['run.paused', undefined],
      ['approval.granted', 'esc_t2_1'],
      ['run.resumed', undefined],
      ['run.completed', undefined],
    ]);
  });

  it('holds plan mode in the order the issue gives it', () => {
    const { events } = planRun();
    const plan = types(events).filter((t) => /^(plan|task|failure|recovery)\.|^run\.completed$/.test(t));
    expect(plan).toEqual([
      'plan.created',
      'plan.gate',
      'plan.gate',
      'task.started',
      'task.completed',
      'task.started',
      'task.completed',
      'task.started',
      'failure.classified',
      'recovery.applied',
      'failure.classified',
      'recovery.applied',
      'recovery.escalated',
      'recovery.escalated',
      'plan.completed',
      'run.completed',
    ]);
    // The first plan (one vague task) is refused by validation: an observation, no plan.created of it.
    const first = events.find((e) => e.type === 'tool.validation' && e.data.callId === 'call_0_0')!;
    expect(first.data).toMatchObject({ ok: false, stage: 'semantic' });
    expect(events.filter((e) => e.type === 'plan.created').map((e) => e.data)).toEqual([
      expect.objectContaining({ callId: 'call_1_0', version: 1 }),
    ]);
    // A logic failure (the check) is fed back once, then used up: a person is asked.
    const recoveries = events.flatMap((e) => (e.type === 'recovery.applied' ? [e.data] : []));
    expect(recoveries.map((r) => [r.taskId, r.class, r.recipe, r.attempt, r.outcome])).toEqual([
      ['t2', 'logic', 'feedback_logic', 1, 'retrying'],
      ['t2', 'logic', 'feedback_logic', 2, 'exhausted'],
    ]);
    // The escalation is an approval request of tool `escalation` with no tool.intent, answered with a choice.
    const esc = events.filter((e) => 'callId' in e.data && e.data.callId === 'esc_t2_1').map((e) => e.type);
    expect(esc).toEqual(['approval.requested', 'approval.granted']);
    const decided = events.find((e) => isEvent(e, 'approval.granted') && e.data.callId === 'esc_t2_1');
    expect(decided?.data).toMatchObject({ choice: 'skip', channel: 'cli' });
    expect(decided && isEvent(decided, 'approval.granted') && decided.data.approver).toMatch(/ for fixture-reviewer$/);
  });

  it('what folds calls leaves the escalation out: no call is made of a callId with no tool.intent', () => {
    const { events } = planRun();
    expect(explainRun(events).map((a) => a.callId)).not.toContain('esc_t2_1');
    expect(recordedCalls(events).map((c) => c.intent.data.callId)).not.toContain('esc_t2_1');
    expect(fold(events).observations.map((o) => o.callId)).not.toContain('esc_t2_1');
  });

  it('the plan account: tasks in the approved order with their ends, the gate, recovery, the summary', () => {
    const { events } = planRun();
    const a = planAccount(events)!;
    expect(a.tasks.map((t) => [t.id, t.index, t.total, t.status])).toEqual([
      ['t1', 1, 4, 'completed'],
      ['t3', 2, 4, 'completed'],
      ['t2', 3, 4, 'skipped'],
      ['t4', 4, 4, 'skipped'],
      ['t5', 0, 4, 'skipped'],
    ]);
    expect(a.gate.map((g) => g.status)).toEqual(['requested', 'modified']);
    expect(a.deviations).toEqual([expect.objectContaining({ callId: 'call_5_0', taskId: 't3', tool: 'bash' })]);
    expect(a.failures.map((f) => [f.taskId, f.class])).toEqual([
      ['t2', 'logic'],
      ['t2', 'logic'],
    ]);
    expect(a.escalations).toEqual([expect.objectContaining({ taskId: 't2', class: 'logic', decision: 'skip' })]);
    const lines = planLines(a);
    expect(lines).toContain(
      '[Task 1/4] ✓ Fix add() in src/math.js to return a + b: add() returns a + b (obs-4). ' +
        '(check `node --test` exit 0)',
    );
    expect(lines).toContain(`gate: modified by ${String(a.gate[1]!.by)}: skip t5; order t1, t3, t2, t4`);
    expect(a.gate[1]!.by).toMatch(/^user:.+ for fixture-reviewer$/);
    expect(lines.at(-1)).toBe('summary: 2/5 tasks completed. 0 failures. Skipped: t5, t2, t4.');
  });

  // Every turn of the real plan run rebuilds to the hashes the loop recorded: plan mode's system prompt and
  // the tools of the plan's phase at each turn (planning: read-only and submit_plan; executing: all of them).
  it('a trace made today of the plan run matches on every turn', async () => {
    const { state, key } = copy();
    const r = await replayRun(runs.plan!.runId, { mode: 'trace', stateDir: state, key });
    expect({ verdict: r.outcome.verdict, differed: r.outcome.differed, compared: r.outcome.compared }).toEqual({
      verdict: 'match',
      differed: 0,
      compared: 12,
    });
    const turns = RunLog.readEvents(state, r.replayRunId).flatMap((e) => (e.type === 'replay.turn' ? [e.data] : []));
    expect(turns.map((t) => [t.turn, t.match, t.state.recorded === t.state.replayed])).toEqual(
      Array.from({ length: 12 }, (_, i) => [i + 1, true, true]),
    );
  });
});
