import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { actionHash } from '@gatehouse/shared';
import { previewOf, terminalChannel, type ApprovalPrompt } from '../../src/approval/channels/index';

/** A three-task plan: t2 depends on t1, t3 on nothing. */
const PLAN = {
  tasks: [
    { id: 't1', title: 'Add a failing test for add()', check: 'npm test -- add', dependsOn: [] },
    { id: 't2', title: 'Fix add() in src/math.js', dependsOn: ['t1'], tools: ['edit_file'], paths: ['src/**'] },
    { id: 't3', title: 'Document add() in README.md', dependsOn: [] },
  ],
};

function planPrompt(input: unknown = PLAN): ApprovalPrompt {
  return {
    runId: 'run_a',
    requestId: 'apr_plan',
    tool: 'submit_plan',
    input,
    actionHash: actionHash({ name: 'submit_plan', input }),
    rule: 'ask: submit_plan',
    reason: 'a plan needs a person',
    risk: [],
    preview: previewOf('submit_plan', input),
    lineage: ['run_a'],
  };
}

const ESCALATION_INPUT = {
  taskId: 't2',
  title: 'Fix add() in src/math.js',
  failureClass: 'unknown',
  reason: 'the check `npm test` exited 1 twice',
  choices: ['retry', 'skip', 'abort'],
};

function escalationPrompt(): ApprovalPrompt {
  return {
    ...planPrompt(),
    requestId: 'apr_esc',
    tool: 'escalation',
    input: ESCALATION_INPUT,
    actionHash: actionHash({ name: 'escalation', input: ESCALATION_INPUT }),
    preview: previewOf('escalation', ESCALATION_INPUT),
  };
}

function terminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (c: Buffer) => (printed += c.toString('utf8')));
  const channel = terminalChannel({ input, output, approver: 'alice' });
  const count = (needle: string) => printed.split(needle).length - 1;
  return {
    channel,
    printed: () => printed,
    type: (text: string) => input.write(text),
    waitFor: (needle: string, times = 1) =>
      vi.waitFor(() => expect(count(needle)).toBeGreaterThanOrEqual(times), { timeout: 2_000, interval: 5 }),
  };
}

const PLAN_MENU = '[a] approve  [c] approve with changes  [q] ask a question  [x] reject';
const ESC_MENU = '[r] retry the task  [s] skip it  [x] abort the plan';
const never = () => new AbortController().signal;

describe('terminal channel: a plan', () => {
  it('shows every task in order with id, title, check, dependencies, tools and paths', async () => {
    const t = terminal();
    const answer = t.channel.ask(planPrompt(), never());
    await t.waitFor(PLAN_MENU);
    const screen = t.printed();
    expect(screen).toContain('│ plan: 3 tasks, run in this order');
    const order = ['1. t1  Add a failing test for add()', '2. t2  Fix add() in src/math.js', '3. t3  Document add()'];
    const at = order.map((line) => screen.indexOf(line));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(screen).toContain('check:  npm test -- add');
    expect(screen).toContain('after:  t1');
    expect(screen).toContain('tools:  edit_file');
    expect(screen).toContain('paths:  src/**');
    // The ordinary menu is not offered: a plan has no "approve for this run".
    expect(screen).not.toContain('[o] approve once');
    t.type('a\n');
    expect(await answer).toEqual({ decision: 'grant', scope: 'once', approver: 'user:alice', channel: 'terminal' });
    await t.channel.close?.();
  });

  it('approves with changes (skip, reorder, edit); a reorder breaking a dependency is asked again', async () => {
    const t = terminal();
    const answer = t.channel.ask(planPrompt(), never());
    await t.waitFor(PLAN_MENU);
    t.type('c\n');
    await t.waitFor('skip (task ids');
    t.type('t3\n');
    await t.waitFor('order (every task kept');
    t.type('t2,t1\n'); // t2 depends on t1
    await t.waitFor('order (every task kept', 2);
    expect(t.printed()).toMatch(/the changes were refused: .*t2.*t1.*\[1\/5\]/);
    t.type('t1, t2\n');
    await t.waitFor('edit (id=');
    t.type('t2 new title\n'); // no '='
    await t.waitFor('edit (id=', 2);
    expect(t.printed()).toContain('an edit is a task id, =, and the new title');
    t.type('t2=Fix add() and its sign error\n');
    await t.waitFor('edit (id=', 3);
    t.type('\n');
    expect(await answer).toEqual({
      decision: 'grant',
      scope: 'once',
      approver: 'user:alice',
      channel: 'terminal',
      changes: { skip: ['t3'], order: ['t1', 't2'], edit: { t2: 'Fix add() and its sign error' } },
    });
    expect(t.printed()).toContain('plan approved with changes: skip t3; order t1, t2; edit t2');
    await t.channel.close?.();
  });

  it('refuses a skip of an unknown task, naming it, and takes the next answer', async () => {
    const t = terminal();
    const answer = t.channel.ask(planPrompt(), never());
    await t.waitFor(PLAN_MENU);
    t.type('c\n');
    await t.waitFor('skip (task ids');
    t.type('t9\n');
    await t.waitFor('skip (task ids', 2);
    expect(t.printed()).toMatch(/refused: .*t9/);
    t.type('not an id!\n');
    await t.waitFor('skip (task ids', 3);
    expect(t.printed()).toContain('"id!" is not a task id');
    t.type('\n');
    await t.waitFor('order (every');
    t.type('\n');
    await t.waitFor('edit (id=');
    t.type('\n');
    // Nothing changed after all: approved as it is, with no changes recorded.
    expect(await answer).toEqual({ decision: 'grant', scope: 'once', approver: 'user:alice', channel: 'terminal' });
    await t.channel.close?.();
  });

  it('asks a question (clarify), never empty', async () => {
    const t = terminal();
    const answer = t.channel.ask(planPrompt(), never());
    await t.waitFor(PLAN_MENU);
    t.type('q\n');
    await t.waitFor('your question for the model');
    t.type('   \n');
    await t.waitFor('your question for the model', 2);
    t.type('Why does t3 not depend on t2?\n');
    expect(await answer).toEqual({
      decision: 'deny',
      approver: 'user:alice',
      channel: 'terminal',
      reason: 'Why does t3 not depend on t2?',
      clarify: true,
    });
    await t.channel.close?.();
  });

  it('rejects with a reason', async () => {
    const t = terminal();
    const answer = t.channel.ask(planPrompt(), never());
    await t.waitFor(PLAN_MENU);
    t.type('r\n'); // the ordinary "approve for this run" key means nothing here
    await t.waitFor('please answer a (approve)');
    t.type('x\n');
    await t.waitFor('why is the plan rejected');
    t.type('the README is not to be touched\n');
    expect(await answer).toEqual({
      decision: 'deny',
      approver: 'user:alice',
      channel: 'terminal',
      reason: 'the README is not to be touched',
    });
    await t.channel.close?.();
  });

  it('denies when the input closes in the middle of the changes', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = '';
    output.on('data', (c: Buffer) => (printed += c.toString('utf8')));
    const channel = terminalChannel({ input, output, approver: 'alice' });
    const answer = channel.ask(planPrompt(), never());
    await vi.waitFor(() => expect(printed).toContain(PLAN_MENU), { timeout: 2_000, interval: 5 });
    input.write('c\n');
    await vi.waitFor(() => expect(printed).toContain('skip (task ids'), { timeout: 2_000, interval: 5 });
    input.end();
    expect(await answer).toMatchObject({ decision: 'deny', reason: 'no answer (input closed)' });
  });

  it('shows terminal escapes in task titles, checks and ids of the plan as escapes, never raw', async () => {
    const hostile = {
      tasks: [
        { id: 't1', title: 'Clear \u001b[2J\u001b[H screen and \u202eevil', check: 'true\u0007', dependsOn: [] },
        { id: 't2', title: 'two\n 3. t3  a fake task line', dependsOn: ['t1'], paths: ['src/\u001b]8;;x\u0007'] },
        { id: 't3', title: 'three', dependsOn: [] },
      ],
    };
    const t = terminal();
    const answer = t.channel.ask(planPrompt(hostile), never());
    await t.waitFor(PLAN_MENU);
    const screen = t.printed();
    expect(screen).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(screen).toContain('Clear \\u{1b}[2J\\u{1b}[H screen and \\u{202e}evil');
    expect(screen).toContain('check:  true\\u{7}');
    // A newline in a title stays inside its task's line.
    expect(screen).toContain('2. t2  two\\n 3. t3  a fake task line');
    t.type('a\n');
    await answer;
    await t.channel.close?.();
  });
});

describe('terminal channel: an escalation', () => {
  it('shows the task, failure class and reason, and answers retry, skip or abort', async () => {
    for (const [key, choice] of [
      ['r', 'retry'],
      ['skip', 'skip'],
      ['x', 'abort'],
    ] as const) {
      const t = terminal();
      const answer = t.channel.ask(escalationPrompt(), never());
      await t.waitFor(ESC_MENU);
      expect(t.printed()).toContain('task:     t2  Fix add() in src/math.js');
      expect(t.printed()).toContain('failure:  unknown');
      expect(t.printed()).toContain('reason:   the check `npm test` exited 1 twice');
      t.type('o\n');
      await t.waitFor('please answer r (retry), s (skip) or x (abort)');
      t.type(`${key}\n`);
      expect(await answer).toEqual({
        decision: 'grant',
        scope: 'once',
        approver: 'user:alice',
        channel: 'terminal',
        choice,
      });
      await t.channel.close?.();
    }
  });
});
