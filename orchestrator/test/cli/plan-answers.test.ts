import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { actionHash, newId, type EventEnvelope } from '@gatehouse/shared';
import { RunLog } from '../../src/events/index';
import { tempStateDir } from '../events/helpers';

/**
 * `gatehouse plan approve|reject|ask|decide` on a paused plan run, through the built CLI in a child
 * process: the log is written event by event as a plan run that paused at its gate (or at an
 * escalation) leaves it, answered, and what the CLI recorded is read back.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');
const gatehouse = (args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    cwd: root,
    env: { ...process.env, GATEHOUSE_STATE_DIR: '' },
  });

const PLAN = {
  tasks: [
    { id: 't1', title: 'Add a failing test for add()', dependsOn: [] },
    { id: 't2', title: 'Fix add() in src/math.js', dependsOn: ['t1'] },
    { id: 't3', title: 'Document add() in README.md', dependsOn: [] },
  ],
};
const ESCALATION = {
  taskId: 't2',
  title: 'Fix add() in src/math.js',
  failureClass: 'unknown',
  reason: 'the check exited 1 twice',
  choices: ['retry', 'skip', 'abort'],
};

/** A run paused on approval requests for these tool/input pairs, as the plan driver leaves it. */
function pausedRun(asks: Array<{ tool: string; input: unknown; callId: string }>) {
  const stateDir = tempStateDir();
  const runId = newId('run');
  const log = RunLog.create(stateDir, runId);
  log.append('run.started', 'user', {
    task: 'fix add()',
    mode: 'sandboxed-auto',
    surface: ['bash', 'read_file', 'edit_file', 'submit_plan'],
    repo: '/repo',
    planMode: true,
  });
  const requests = asks.map(({ tool, input, callId }) => {
    const requestId = newId('apr');
    const hash = actionHash({ name: tool, input });
    log.append('approval.requested', 'runtime', {
      requestId,
      callId,
      tool,
      input,
      actionHash: hash,
      executionHash: hash,
      rule: `ask: ${tool}`,
      reason: 'plan mode asks a person',
      risk: [],
      shape: tool,
      lineage: [runId],
    });
    return requestId;
  });
  log.append('run.paused', 'runtime', { pending: requests, workspace: { dir: null, files: [], deleted: [] } });
  log.sync();
  log.close();
  const events = (): EventEnvelope[] => [...RunLog.readEvents(stateDir, runId)];
  const answers = () => events().filter((e) => e.type === 'approval.granted' || e.type === 'approval.denied');
  return { stateDir, runId, requests, events, answers, at: ['--state-dir', stateDir] };
}

const plan = () => pausedRun([{ tool: 'submit_plan', input: PLAN, callId: 'call_plan' }]);

describe('gatehouse plan approve|reject|ask|decide', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
  });

  it('approves the pending plan with changes: skip, order, edit recorded on approval.granted', () => {
    const r = plan();
    const out = gatehouse([
      'plan',
      'approve',
      r.runId,
      '--skip',
      't3',
      '--order',
      't1,t2',
      '--edit',
      't2=Fix the sign error in add()',
      '--reason',
      'docs later',
      ...r.at,
    ]);
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    expect(out.stdout).toContain(`approved with changes: ${r.requests[0]} submit_plan`);
    expect(out.stdout).toContain(`gatehouse resume ${r.runId}`);
    const answers = r.answers();
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({
      type: 'approval.granted',
      actor: 'user',
      data: {
        requestId: r.requests[0],
        callId: 'call_plan',
        scope: 'once',
        channel: 'cli',
        reason: 'docs later',
        changes: { skip: ['t3'], order: ['t1', 't2'], edit: { t2: 'Fix the sign error in add()' } },
      },
    });
    expect(answers[0]!.data).not.toHaveProperty('choice');
    // Answered: a second answer is refused.
    const again = gatehouse(['plan', 'reject', r.runId, '--reason', 'too late', ...r.at]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('has no plan waiting for approval');
    expect(r.answers()).toHaveLength(1);
  });

  it('approves as it is without flags: no changes recorded', () => {
    const r = plan();
    const out = gatehouse(['plan', 'approve', r.runId, '--json', ...r.at]);
    expect(out.status, out.stderr).toBe(0);
    const event = JSON.parse(out.stdout) as EventEnvelope;
    expect(event).toMatchObject({ type: 'approval.granted', data: { requestId: r.requests[0], channel: 'cli' } });
    expect(event.data).not.toHaveProperty('changes');
    expect(r.answers()).toHaveLength(1);
  });

  it('--request pins the answer to the plan the person read: another pending plan is refused, nothing written', () => {
    const r = plan();
    const other = gatehouse(['plan', 'approve', r.runId, '--request', 'apr_readearlier0000000', ...r.at]);
    expect(other.status).toBe(1);
    expect(other.stderr).toContain(`the plan waiting for approval is ${r.requests[0]}, not apr_readearlier0000000`);
    expect(r.answers()).toHaveLength(0);
    const rejected = gatehouse([
      'plan',
      'reject',
      r.runId,
      '--request',
      'apr_readearlier0000000',
      '--reason',
      'no',
      ...r.at,
    ]);
    expect(rejected.status).toBe(1);
    expect(r.answers()).toHaveLength(0);
    const same = gatehouse(['plan', 'approve', r.runId, '--request', r.requests[0]!, '--json', ...r.at]);
    expect(same.status, same.stderr).toBe(0);
    expect(r.answers().map((e) => [e.type, e.data.requestId])).toEqual([['approval.granted', r.requests[0]]]);
  });

  it('refuses changes that break the plan, naming the problem, and writes nothing', () => {
    const r = plan();
    const before = r.events().length;
    const reorder = gatehouse(['plan', 'approve', r.runId, '--order', 't2,t1,t3', ...r.at]);
    expect(reorder.status).toBe(1);
    expect(reorder.stderr).toMatch(/was not answered, nothing was recorded: the changes were refused: .*t2.*t1/);
    const unknown = gatehouse(['plan', 'approve', r.runId, '--skip', 't9', ...r.at]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('t9');
    expect(r.events()).toHaveLength(before);
  });

  it('bad flags are usage errors (exit 2) and write nothing', () => {
    const r = plan();
    const before = r.events().length;
    for (const args of [
      ['approve', r.runId, '--edit', 't2 no equals sign'],
      ['approve', r.runId, '--edit', 't2='],
      ['approve', r.runId, '--skip', 'not an id!'],
      ['approve', r.runId, '--order', 't1,t1,t2'],
      ['approve', r.runId, '--skip', 't1', '--skip', 't1'],
      ['reject', r.runId],
      ['reject', r.runId, '--reason', '  '],
      ['ask', r.runId],
      ['decide', r.runId, 'apr_x', 'maybe'],
    ]) {
      const out = gatehouse(['plan', ...args, ...r.at]);
      expect(out.status, `${args.join(' ')}: ${out.stderr}`).toBe(2);
    }
    expect(r.events()).toHaveLength(before);
  });

  it('rejects with a reason: approval.denied without clarify', () => {
    const r = plan();
    const out = gatehouse(['plan', 'reject', r.runId, '--reason', 'README is out of scope', ...r.at]);
    expect(out.status, out.stderr).toBe(0);
    const [denied] = r.answers();
    expect(denied).toMatchObject({
      type: 'approval.denied',
      data: { requestId: r.requests[0], reason: 'README is out of scope', channel: 'cli' },
    });
    expect(denied!.data).not.toHaveProperty('clarify');
  });

  it('asks a question: approval.denied with clarify and the question as the reason', () => {
    const r = plan();
    const out = gatehouse(['plan', 'ask', r.runId, '--question', 'Why does t3 not depend on t2?', ...r.at]);
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain('question sent');
    expect(r.answers()).toMatchObject([
      { type: 'approval.denied', data: { reason: 'Why does t3 not depend on t2?', clarify: true, channel: 'cli' } },
    ]);
  });

  it('refuses when no plan waits, or when several do', () => {
    const none = pausedRun([{ tool: 'bash', input: { command: 'git push' }, callId: 'call_1' }]);
    const out = gatehouse(['plan', 'approve', none.runId, ...none.at]);
    expect(out.status).toBe(1);
    expect(out.stderr).toMatch(/has no plan waiting for approval \(pending: apr_\S+ bash\)/);
    const two = pausedRun([
      { tool: 'submit_plan', input: PLAN, callId: 'call_a' },
      { tool: 'submit_plan', input: { tasks: PLAN.tasks.slice(0, 2) }, callId: 'call_b' },
    ]);
    const both = gatehouse(['plan', 'ask', two.runId, '--question', 'which one?', ...two.at]);
    expect(both.status).toBe(1);
    expect(both.stderr).toContain('has 2 plans waiting for approval');
    expect([...none.answers(), ...two.answers()]).toEqual([]);
  });

  it('decides an escalation: retry, skip or abort recorded as the choice; other requests refuse a choice', () => {
    for (const choice of ['retry', 'skip', 'abort'] as const) {
      const r = pausedRun([{ tool: 'escalation', input: ESCALATION, callId: 'esc_t2_1' }]);
      const out = gatehouse(['plan', 'decide', r.runId, r.requests[0]!, choice, '--reason', 'flaky CI', ...r.at]);
      expect(out.status, out.stderr).toBe(0);
      expect(out.stdout).toContain(`decided ${choice}`);
      expect(r.answers()).toMatchObject([
        { type: 'approval.granted', data: { callId: 'esc_t2_1', choice, reason: 'flaky CI', channel: 'cli' } },
      ]);
    }
    // A plain `gatehouse approve` cannot answer an escalation (it carries no choice), and says what can.
    const esc = pausedRun([{ tool: 'escalation', input: ESCALATION, callId: 'esc_t2_1' }]);
    const plain = gatehouse(['approve', esc.runId, esc.requests[0]!, ...esc.at]);
    expect(plain.status).toBe(1);
    expect(plain.stderr).toContain(`gatehouse plan decide ${esc.runId} ${esc.requests[0]} retry|skip|abort`);
    // …and `plan decide` cannot answer a plan.
    const p = plan();
    const wrong = gatehouse(['plan', 'decide', p.runId, p.requests[0]!, 'skip', ...p.at]);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain('answers an escalation, not submit_plan');
    expect([...esc.answers(), ...p.answers()]).toEqual([]);
  });
});
