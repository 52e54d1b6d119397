import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { EventData, type EventEnvelope } from '@gatehouse/shared';
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
 * What schema version 6 added, as the v6 fixture's plan run holds it (test/fixtures/logs/plan-run.ts):
 * a rejected plan, the plan, the gate's changes, tasks with their ids, a deviation, a check, a failure
 * classified, recovered and escalated (an approval request with no tool call behind it), the summary.
 * fixture-logs.test.ts runs the older checks (verify, show, the fold) over every v6 run.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const fixtures = path.join(root, 'test/fixtures/logs');
const runs = JSON.parse(readFileSync(path.join(fixtures, 'v6', 'runs.json'), 'utf8')) as Record<
  string,
  { runId: string }
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
  it('every line parses against its schema, the run verifies, and the fold ends it final', () => {
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
    expect(fold(events)).toMatchObject({ status: 'final', stopReason: 'plan_completed' });
    expect(events[0]!.data).toMatchObject({ planMode: true });
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
      'recovery.escalated',
      'recovery.escalated',
      'plan.completed',
      'run.completed',
    ]);
    // The escalation is an approval request of tool `escalation` with no tool.intent, answered with a choice.
    const esc = events.filter((e) => 'callId' in e.data && e.data.callId === 'esc_t2_1').map((e) => e.type);
    expect(esc).toEqual(['approval.requested', 'approval.granted']);
    expect(events.find((e) => e.type === 'approval.granted' && e.data.callId === 'esc_t2_1')!.data).toMatchObject({
      choice: 'skip',
    });
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
    expect(a.deviations).toEqual([expect.objectContaining({ callId: 'call_4_0', taskId: 't3', tool: 'bash' })]);
    expect(a.escalations).toEqual([expect.objectContaining({ taskId: 't2', decision: 'skip' })]);
    const lines = planLines(a);
    expect(lines).toContain(
      '[Task 1/4] ✓ Fix add() in src/math.js to return a + b: add() returns a + b (obs-3). ' +
        '(check `node --test` exit 0)',
    );
    expect(lines).toContain('gate: modified by fixture-reviewer: skip t5; order t1, t3, t2, t4');
    expect(lines.at(-1)).toMatch(/^summary: 2\/4 tasks completed\. 0 failures\./);
  });

  // KNOWN GAP (issue 15, open): v6's plan run was written event by event before the plan driver existed; the
  // driver's context (plan tools on the surface, plan messages) differs from it, so a trace truthfully reports
  // every turn as differing. v6 must be regenerated by the real `gatehouse plan` before it is released.
  it('a trace made today compares all turns of the synthetic plan run: each differs (driver-era context)', async () => {
    const { state, key } = copy();
    const r = await replayRun(runs.plan!.runId, { mode: 'trace', stateDir: state, key });
    expect({ verdict: r.outcome.verdict, differed: r.outcome.differed, compared: r.outcome.compared }).toEqual({
      verdict: 'mismatch',
      differed: 8,
      compared: 8,
    });
  });
});
