import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { fold, RunLog, verifyLog } from '@gatehouse/orchestrator';

/**
 * `gatehouse plan` end to end: the built CLI, a real sandbox, scripted models. The plan passes the
 * gate (a policy rule, or a person answering a headless pause), then runs exactly as approved.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function scratch(prefix: string): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}
function repo(): string {
  const dir = scratch('gh-plan-repo-');
  cpSync(path.join(root, 'examples/failing-test'), dir, { recursive: true });
  return dir;
}
function json(name: string, content: unknown): string {
  const f = path.join(scratch('gh-plan-'), name);
  writeFileSync(f, JSON.stringify(content));
  return f;
}
interface Event {
  type: string;
  id: string;
  data: Record<string, unknown>;
  runId: string;
}
const parse = (stdout: string): Event[] =>
  stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Event);
const of = (events: Event[], type: string) => events.filter((e) => e.type === type).map((e) => e.data);
const ENV = { ...process.env, CI: 'true' };

function plan(
  dir: string,
  turns: unknown[],
  policy: unknown,
  stateDir = scratch('gh-plan-runs-'),
  extra: string[] = [],
) {
  const r = spawnSync(
    process.execPath,
    [
      cli,
      'plan',
      'make add() add',
      '--repo',
      dir,
      '--model',
      `scripted:${json('script.json', { turns })}`,
      '--policy',
      json('policy.json', policy),
      '--state-dir',
      stateDir,
      '--json',
      ...extra,
    ],
    { encoding: 'utf8', timeout: 180_000, env: ENV, input: '' },
  );
  const events = parse(r.stdout);
  return { status: r.status, stderr: r.stderr, events, stateDir, runId: events[0]?.runId ?? 'none' };
}
function gatehouse(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 180_000, env: ENV, input: '' });
  return { status: r.status, stderr: r.stderr, events: parse(r.stdout) };
}
const logOf = (stateDir: string, runId: string): Event[] =>
  readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Event);

const call = (name: string, input: unknown) => ({ toolCalls: [{ name, input }] });
const read = call('read_file', { path: 'src/math.js' });
const fix = call('edit_file', { path: 'src/math.js', oldText: 'return a - b;', newText: 'return a + b;' });
const done = (taskId: string, summary: string) => call('complete_task', { taskId, summary });
const FIX_PLAN = [
  { id: 't1', title: 'Read src/math.js to find why add() is wrong', tools: ['read_file'] },
  {
    id: 't2',
    title: 'Change add() in src/math.js to return a + b',
    dependsOn: ['t1'],
    tools: ['edit_file', 'read_file'],
    paths: ['src/**'],
    check: 'node --test',
  },
  { id: 't3', title: 'Run the test suite with node --test', dependsOn: ['t2'], tools: ['bash'] },
];
const READS = ['read_file(**)', 'bash(node --test*)', 'edit_file(src/**)', 'write_file(*.txt)'];
const POLICY_APPROVES_PLANS = { mode: 'confirm-novel', allow: ['submit_plan', ...READS] };
const PEOPLE_APPROVE_PLANS = { mode: 'confirm-novel', allow: READS };

describe('gatehouse plan (real sandbox, scripted model)', () => {
  it('a plan approved by a policy rule runs exactly, task by task; a deviation is refused; 3/3 tasks completed', () => {
    const r = plan(
      repo(),
      [
        read,
        call('submit_plan', { tasks: FIX_PLAN }),
        fix, // t1 may only read: a deviation
        read,
        done('t1', 'add() in src/math.js subtracts (obs-4).'),
        fix,
        done('t2', 'Changed add() in src/math.js to add (obs-6).'),
        call('bash', { command: 'node --test' }),
        done('t3', 'The tests pass (obs-9).'),
      ],
      POLICY_APPROVES_PLANS,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.events[0]).toMatchObject({ type: 'run.started', data: { planMode: true } });
    const [created] = of(r.events, 'plan.created');
    expect(created).toMatchObject({
      version: 1,
      dependencies: [
        ['t2', 't1'],
        ['t3', 't2'],
      ],
    });
    expect(of(r.events, 'plan.gate')).toMatchObject([{ status: 'approved', by: 'policy:allow[0] submit_plan' }]);
    expect(of(r.events, 'task.started').map((d) => [d.taskId, d.index, d.total, d.attempt])).toEqual([
      ['t1', 1, 3, 1],
      ['t2', 2, 3, 1],
      ['t3', 3, 3, 1],
    ]);
    // The deviation: refused at stage `plan`, never run, and the model is told it may submit a new plan.
    const deviation = r.events.find((e) => e.type === 'tool.validation' && e.data.stage === 'plan');
    expect(deviation?.data).toMatchObject({ callId: 'call_2_0', ok: false });
    const seen = r.events.find((e) => e.type === 'tool.observation' && e.data.callId === 'call_2_0');
    expect(seen?.data.outcome).toBe('rejected');
    expect(String(seen?.data.content)).toMatch(/may use only read_file; edit_file is outside it.*submit a new plan/s);
    expect(r.events.some((e) => e.type === 'tool.execution.started' && e.data.callId === 'call_2_0')).toBe(false);
    // Every call of a task carries its id; planning calls none.
    const intents = r.events.filter((e) => e.type === 'tool.intent');
    expect(intents.map((e) => e.data.taskId)).toEqual([
      undefined,
      undefined,
      't1',
      't1',
      't1',
      't2',
      't2',
      't2', // gatehouse's run of t2's check
      't3',
      't3',
    ]);
    const completed = of(r.events, 'task.completed');
    expect(completed.map((d) => d.taskId)).toEqual(['t1', 't2', 't3']);
    expect(completed[1]).toMatchObject({ check: { command: 'node --test', exitCode: 0, callId: 'check_call_6_0' } });
    expect(of(r.events, 'plan.completed')).toMatchObject([
      { completed: ['t1', 't2', 't3'], failed: [], skipped: [], summary: '3/3 tasks completed. 0 failures.' },
    ]);
    expect(r.events.at(-1)).toMatchObject({
      type: 'run.completed',
      data: { status: 'final', answer: '3/3 tasks completed. 0 failures.', decidedBy: 'plan' },
    });
    expect(r.stderr).toMatch(/\[Task 2\/3\] ✓ Change add\(\) in src\/math.js to return a \+ b: Changed add\(\)/);
    expect(r.stderr).toMatch(/3\/3 tasks completed\. 0 failures\./);
    expect(verifyLog(path.join(r.stateDir, 'runs', r.runId, 'events.jsonl')).ok).toBe(true);
  });

  it('headless: the plan pauses at the gate (exit 3); approved, the resumed run executes it', () => {
    const dir = repo();
    const r = plan(
      dir,
      [
        call('submit_plan', { tasks: FIX_PLAN }),
        read,
        done('t1', 'add() in src/math.js subtracts (obs-2).'),
        fix,
        done('t2', 'Changed add() in src/math.js to add (obs-4).'),
        call('bash', { command: 'node --test' }),
        done('t3', 'The tests pass (obs-7).'),
      ],
      PEOPLE_APPROVE_PLANS,
    );
    expect(r.status, r.stderr).toBe(3);
    expect(of(r.events, 'plan.gate')).toMatchObject([{ status: 'requested' }]);
    expect(of(r.events, 'task.started')).toEqual([]);
    const requestId = String(of(r.events, 'approval.requested')[0]!.requestId);
    expect(of(r.events, 'plan.gate')[0]!.requestId).toBe(requestId);
    expect(gatehouse(['approve', r.runId, requestId, '--state-dir', r.stateDir]).status).toBe(0);
    const resumed = gatehouse(['resume', r.runId, '--state-dir', r.stateDir, '--repo', dir, '--json']);
    expect(resumed.status, resumed.stderr).toBe(0);
    const log = logOf(r.stateDir, r.runId);
    expect(of(log, 'plan.gate')).toMatchObject([{ status: 'requested' }, { status: 'approved', requestId }]);
    expect(of(log, 'task.completed').map((d) => d.taskId)).toEqual(['t1', 't2', 't3']);
    expect(log.at(-1)).toMatchObject({ data: { status: 'final', answer: '3/3 tasks completed. 0 failures.' } });
  });

  it('approved with changes: the reordered plan runs in the new order and the skipped task is not run', () => {
    const files = ['a', 'b', 'c'].map((x) => ({
      id: `t${x}`,
      title: `Create ${x}.txt containing the letter ${x}`,
      tools: ['write_file'],
      paths: [`${x}.txt`],
      check: `grep -qx ${x} ${x}.txt`,
    }));
    const write = (x: string) => call('write_file', { path: `${x}.txt`, content: `${x}\n` });
    const r = plan(
      repo(),
      [
        call('submit_plan', { tasks: files }),
        write('c'),
        done('tc', 'Wrote c.txt (obs-2).'),
        write('a'),
        done('ta', 'Wrote a.txt (obs-5).'),
      ],
      PEOPLE_APPROVE_PLANS,
    );
    expect(r.status, r.stderr).toBe(3);
    const req = of(r.events, 'approval.requested')[0]!;
    // A person approves with changes (what `gatehouse plan approve --skip tb --order tc,ta` records).
    const { log: runLog } = RunLog.open(r.stateDir, r.runId);
    try {
      const request = fold(runLog.events()).approvals.requests[String(req.requestId)]!;
      runLog.append(
        'approval.granted',
        'user',
        {
          requestId: request.requestId,
          callId: request.callId,
          actionHash: request.actionHash,
          executionHash: request.executionHash,
          scope: 'once',
          approver: 'user:test',
          channel: 'cli',
          reason: '',
          changes: { skip: ['tb'], order: ['tc', 'ta'] },
        },
        { causationId: request.eventId },
      );
    } finally {
      runLog.close();
    }
    const resumed = gatehouse(['resume', r.runId, '--state-dir', r.stateDir, '--json']);
    const log = logOf(r.stateDir, r.runId);
    expect(of(log, 'plan.gate').at(-1)).toMatchObject({
      status: 'modified',
      by: 'user:test',
      changes: { skip: ['tb'], order: ['tc', 'ta'] },
      tasks: [{ id: 'tc' }, { id: 'ta' }],
    });
    expect(of(log, 'task.started').map((d) => [d.taskId, d.index, d.total])).toEqual([
      ['tc', 1, 2],
      ['ta', 2, 2],
    ]);
    const written = log.filter((e) => e.type === 'tool.execution.started' && e.data.primitive === 'write_file');
    expect(written.map((e) => (e.data.input as { path: string }).path)).toEqual(['c.txt', 'a.txt']);
    expect(log.some((e) => e.type === 'tool.intent' && e.data.taskId === 'tb')).toBe(false);
    expect(of(log, 'plan.completed')).toMatchObject([
      { completed: ['tc', 'ta'], skipped: ['tb'], summary: '2/3 tasks completed. 0 failures. Skipped: tb.' },
    ]);
    // Not every task of the plan completed: partial (exit 4), the summary as its answer.
    expect(resumed.status, resumed.stderr).toBe(4);
    expect(log.at(-1)).toMatchObject({ data: { status: 'partial', stopReason: 'plan_incomplete' } });
  });

  it("a task whose check fails is not completed: task.failed, and the tasks after it don't run", () => {
    const tasks = FIX_PLAN.map((t) => (t.id === 't1' ? { ...t, check: 'test -e NOPE' } : t));
    const r = plan(
      repo(),
      [call('submit_plan', { tasks }), read, done('t1', 'add() in src/math.js subtracts (obs-2).')],
      POLICY_APPROVES_PLANS,
      undefined,
      // The config's recipe for logic failures: no retry, fail the task (the default retries once, then asks).
      ['--config', json('config.json', { recovery: { logic: { retries: 0, exhausted: 'fail' } } })],
    );
    expect(of(r.events, 'failure.classified')).toMatchObject([{ taskId: 't1', class: 'logic' }]);
    const failed = of(r.events, 'task.failed');
    expect(failed).toMatchObject([{ taskId: 't1', index: 1, total: 3 }]);
    expect(of(r.events, 'task.completed')).toEqual([]);
    expect(of(r.events, 'task.started').map((d) => d.taskId)).toEqual(['t1']);
    expect(of(r.events, 'plan.completed')).toMatchObject([{ failed: ['t1'], skipped: ['t2', 't3'] }]);
    expect(r.status).toBe(4);
  });

  it('SIGKILL in the middle of a plan, then resume: the completed task is not run again', async () => {
    const dir = repo();
    const stateDir = scratch('gh-plan-runs-');
    const tasks = FIX_PLAN.map((t) => (t.id === 't2' ? { ...t, tools: ['edit_file', 'read_file', 'bash'] } : t));
    const turns = [
      call('submit_plan', { tasks }),
      read,
      done('t1', 'add() in src/math.js subtracts (obs-2).'),
      call('bash', { command: 'node --test' }), // killed while this runs
      fix,
      done('t2', 'Changed add() in src/math.js to add (obs-5).'),
      call('bash', { command: 'node --test' }),
      done('t3', 'The tests pass (obs-8).'),
    ];
    const args = [cli, 'plan', 'make add() add', '--repo', dir, '--model', `scripted:${json('s.json', { turns })}`];
    const child = spawn(
      process.execPath,
      [...args, '--policy', json('p.json', POLICY_APPROVES_PLANS), '--state-dir', stateDir, '--json'],
      { env: ENV, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let runId = '';
    const killed = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 120_000);
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const events = parse(out.slice(0, out.lastIndexOf('\n') + 1));
        runId = events[0]?.runId ?? runId;
        // Killed once t1 is done and a command of t2 runs: mid-plan, mid-call.
        if (events.some((e) => e.type === 'tool.execution.started' && e.data.callId === 'call_3_0')) {
          child.kill('SIGKILL');
          clearTimeout(timer);
          resolve(true);
        }
      });
      child.on('exit', () => resolve(false));
    });
    expect(killed).toBe(true);
    await new Promise((r) => child.once('close', r));
    const before = logOf(stateDir, runId);
    expect(of(before, 'task.completed').map((d) => d.taskId)).toEqual(['t1']);
    const resumed = gatehouse(['resume', runId, '--state-dir', stateDir, '--repo', dir, '--json']);
    expect(resumed.status, resumed.stderr).toBe(0);
    const log = logOf(stateDir, runId);
    expect(of(log, 'task.started').filter((d) => d.taskId === 't1')).toHaveLength(1);
    // The call the crash cut off is reported to the model, not run again, and not a task failure.
    const cut = log.find((e) => e.type === 'tool.observation' && e.data.callId === 'call_3_0');
    expect(String(cut?.data.content)).toMatch(/interrupted/);
    expect(of(log, 'task.failed')).toEqual([]);
    expect(of(log, 'task.completed').map((d) => d.taskId)).toEqual(['t1', 't2', 't3']);
    expect(log.at(-1)).toMatchObject({ data: { status: 'final', answer: '3/3 tasks completed. 0 failures.' } });
    expect(existsSync(path.join(stateDir, 'runs', runId))).toBe(true);
  });
});
