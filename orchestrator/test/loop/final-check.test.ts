import { describe, expect, it } from 'vitest';
import { compileContext } from '../../src/context/compile';
import type { ModelProvider } from '../../src/providers/types';
import { deny, grant, pause, policyOf, scriptedChannel } from '../tools/pipeline-harness';
import {
  bash,
  breakIt,
  CHECK,
  checks,
  feedback,
  final,
  fix,
  FIXED,
  ofType,
  stretch,
  world,
} from './final-check-harness';

describe('the check decides success', () => {
  it('the model’s own pass is not the verdict: gatehouse runs it in a fresh HOME, and that decides', async () => {
    const w = world();
    const outcome = await stretch(w, { turns: [fix, bash(CHECK), final('Fixed (obs-1); tests pass (obs-2).')] });
    expect(outcome).toMatchObject({ status: 'final', stopReason: 'final_answer', decidedBy: 'check' });
    expect(checks(w)).toEqual([
      { command: CHECK, ranBy: 'gatehouse', callId: 'check_1', observationId: 'obs-3', exitCode: 0, passed: true },
    ]);
    expect(w.commands).toEqual([CHECK, CHECK]);
    // Only gatehouse's run asks the daemon for a HOME made afresh; the model's runs keep theirs.
    const started = (callId: string) =>
      w.log.eventsOf(callId).find((e) => e.type === 'tool.execution.started')?.data as {
        input: { freshHome?: boolean };
      };
    expect(started('check_1').input.freshHome).toBe(true);
    expect(started('call_1_0').input.freshHome).toBeUndefined();
  });

  it('a failing run of the model’s (whitespace aside) decides without another run', async () => {
    const w = world();
    const done = final('Done.');
    const outcome = await stretch(w, { turns: [bash('  npm    test '), bash('cat src/add.js'), done, done] });
    expect(outcome).toMatchObject({ status: 'partial', stopReason: 'check_failed', decidedBy: 'check' });
    expect(checks(w)).toMatchObject([
      { ranBy: 'model', callId: 'call_0_0', passed: false },
      { ranBy: 'model', callId: 'call_0_0', passed: false },
    ]);
    expect(w.commands).toEqual(['  npm    test ', 'cat src/add.js']);
  });

  it('a change after the model’s run: gatehouse runs the check itself, through the pipeline, as check_1', async () => {
    const w = world();
    const outcome = await stretch(w, { turns: [bash(CHECK), fix, final('Fixed add() in src/add.js (obs-2).')] });
    expect(outcome).toMatchObject({ status: 'final', decidedBy: 'check' });
    expect(checks(w)).toEqual([
      { command: CHECK, ranBy: 'gatehouse', callId: 'check_1', observationId: 'obs-3', exitCode: 0, passed: true },
    ]);
    const own = w.log.eventsOf('check_1');
    expect(own.map((e) => e.type)).toEqual([
      'tool.intent',
      'tool.validation',
      'tool.approval',
      'tool.execution.started',
      'tool.execution.completed',
      'tool.observation',
      'run.check',
    ]);
    expect(own[0]).toMatchObject({ actor: 'runtime', data: { tool: 'bash', input: { command: CHECK } } });
    // Run by the policy's decision like any call, in the sandbox.
    expect(w.sandbox.executed().map((c) => (c.input as { command?: string }).command)).toEqual([
      CHECK,
      undefined,
      CHECK,
    ]);
  });

  it('`npm test || true` is not the check: gatehouse runs the real one, which fails, and it goes back', async () => {
    const w = world();
    const outcome = await stretch(w, {
      // An answer that claims nothing: a "tests pass" citing `npm test || true` is the claim judge's to refuse.
      turns: [bash('npm test || true'), final('Done (obs-1).'), fix, final('Fixed it (obs-3).')],
    });
    expect(outcome).toMatchObject({ status: 'final', decidedBy: 'check' });
    expect(checks(w)).toMatchObject([
      { ranBy: 'gatehouse', callId: 'check_1', exitCode: 1, passed: false, reason: 'exit code 1' },
      { ranBy: 'gatehouse', callId: 'check_2', exitCode: 0, passed: true },
    ]);
  });

  it('a failure goes back once with the end of its output, framed as data; the fix then passes', async () => {
    const w = world();
    const outcome = await stretch(w, {
      turns: [breakIt, final('Done (obs-1).'), fix, bash(CHECK), final('Fixed (obs-3); tests pass (obs-4).')],
    });
    expect(outcome).toMatchObject({ status: 'final', decidedBy: 'check' });
    const [sent] = feedback(w);
    expect(sent).toMatchObject({ kind: 'check', turn: 2 });
    expect(sent!.reason).toMatch(/^the check `npm test` failed \(exit code 1; obs-2, run by gatehouse\)\./);
    expect(sent!.reason).toMatch(
      /<untrusted-data id="obs-2" nonce="[0-9a-f]+">\nexit code 1\nnot ok 1 - add\n[\s\S]*# fail 1\n\n<\/untrusted-data/,
    );
    expect(checks(w)).toMatchObject([
      { ranBy: 'gatehouse', callId: 'check_1', passed: false },
      { ranBy: 'gatehouse', callId: 'check_2', passed: true },
    ]);
    // The model is shown the feedback, never gatehouse's own call as a tool result it did not ask for.
    const ctx = compileContext(w.log.events(), { system: 's', task: 't', tools: [], tokenBudget: 100_000 });
    const tools = ctx.request.messages.flatMap((m) => (m.role === 'tool' ? [m.callId] : []));
    expect(tools).not.toContain('check_1');
    expect(tools).toEqual(['call_0_0', 'call_2_0', 'call_3_0']);
    expect(ctx.request.messages.some((m) => m.role === 'user' && m.content.includes('obs-2'))).toBe(true);
  });

  it('a second failure ends the run partial, decided by the check', async () => {
    const w = world();
    const outcome = await stretch(w, {
      turns: [breakIt, final('Done (obs-1).'), bash('cat src/add.js'), final('Still done (obs-3).')],
    });
    expect(outcome).toEqual({
      status: 'partial',
      stopReason: 'check_failed',
      answer: 'Still done (obs-3).',
      decidedBy: 'check',
    });
    expect(feedback(w)).toHaveLength(1);
    expect(checks(w)).toMatchObject([
      { callId: 'check_1', passed: false },
      { callId: 'check_1', passed: false },
    ]);
  });

  it('a check the policy denies did not pass: partial at once, nothing run', async () => {
    const w = world();
    const policy = policyOf({ mode: 'sandboxed-auto', deny: ['bash(npm test*)'] });
    const outcome = await stretch(w, { turns: [fix, bash(CHECK), final('Fixed (obs-1).')] }, { policy });
    expect(outcome).toMatchObject({ status: 'partial', stopReason: 'check_not_run', decidedBy: 'check' });
    expect(checks(w)).toMatchObject([
      {
        ranBy: 'gatehouse',
        callId: 'check_1',
        exitCode: null,
        passed: false,
        reason: expect.stringMatching(/did not run: denied/) as unknown,
      },
    ]);
    expect(w.commands).toEqual([]);
    expect(feedback(w)).toEqual([]);
  });

  it('a check a person declines did not pass', async () => {
    const w = world();
    const policy = policyOf({ mode: 'sandboxed-auto', ask: ['bash(npm test*)'] });
    const outcome = await stretch(
      w,
      { turns: [fix, final('Fixed (obs-1).')] },
      { policy, channel: scriptedChannel(deny('not now')) },
    );
    expect(outcome).toMatchObject({ status: 'partial', stopReason: 'check_not_run', decidedBy: 'check' });
    expect(w.commands).toEqual([]);
  });

  it('a check waiting for approval pauses the run; once granted, resume runs it and the run ends final', async () => {
    const w = world();
    const policy = policyOf({ mode: 'sandboxed-auto', ask: ['bash(npm test*)'] });
    const script = { turns: [fix, final('Fixed (obs-1).')] };
    const first = await stretch(w, script, { policy, channel: scriptedChannel(pause) });
    const [asked] = ofType(w, 'approval.requested');
    expect(first).toEqual({ status: 'paused', stopReason: 'awaiting_approval', pending: [asked!.data.requestId] });
    expect(asked!.data).toMatchObject({ callId: 'check_1', tool: 'bash' });
    expect(checks(w)).toEqual([]);
    // Still unanswered: it pauses again, nothing runs, the model is not asked again.
    expect(await stretch(w, script, { policy, channel: scriptedChannel(pause), resume: true })).toEqual(first);
    expect(w.commands).toEqual([]);
    const resumed = await stretch(w, script, { policy, channel: scriptedChannel(grant()), resume: true });
    expect(resumed).toMatchObject({ status: 'final', answer: 'Fixed (obs-1).', decidedBy: 'check' });
    expect(w.commands).toEqual([CHECK]);
    expect(checks(w)).toMatchObject([{ ranBy: 'gatehouse', callId: 'check_1', passed: true }]);
    expect(ofType(w, 'model.request')).toHaveLength(2);
  });

  it('a check waiting for approval that is then denied ends the run partial on resume', async () => {
    const w = world();
    const policy = policyOf({ mode: 'sandboxed-auto', ask: ['bash(npm test*)'] });
    const script = { turns: [fix, final('Fixed (obs-1).')] };
    await stretch(w, script, { policy, channel: scriptedChannel(pause) });
    const resumed = await stretch(w, script, {
      policy,
      channel: scriptedChannel(deny('no tests today')),
      resume: true,
    });
    expect(resumed).toMatchObject({ status: 'partial', stopReason: 'check_not_run', decidedBy: 'check' });
    expect(w.commands).toEqual([]);
  });

  it('gatehouse stopped while its check ran: resume reports that run interrupted and runs the check anew', async () => {
    const done = world();
    const script = { turns: [fix, final('Fixed (obs-1).')] };
    await stretch(done, script);
    // The log as a crash during check_1 leaves it: up to its execution's start.
    const events = done.log.events();
    const cut = events.findIndex((e) => e.type === 'tool.execution.started' && e.data.callId === 'check_1');
    const w = world();
    for (const e of events.slice(1, cut + 1))
      w.log.append(e.type as never, e.actor, e.data as never, { causationId: e.causationId });
    w.sandbox.workspace.write('src/add.js', FIXED);
    const resumed = await stretch(w, script, { resume: true });
    expect(resumed).toMatchObject({ status: 'final', decidedBy: 'check' });
    const lost = w.log.eventsOf('check_1').find((e) => e.type === 'tool.execution.completed');
    expect(lost?.data).toMatchObject({ status: 'lost' });
    expect(checks(w)).toMatchObject([{ ranBy: 'gatehouse', callId: 'check_2', passed: true }]);
    expect(w.commands).toEqual([CHECK]);
  });

  it('without a check, an accepted answer is final as before and nothing runs', async () => {
    const w = world();
    const outcome = await stretch(w, { turns: [fix, final()] }, { check: null });
    expect(outcome).toEqual({
      status: 'final',
      stopReason: 'final_answer',
      answer: 'Fixed add() in src/add.js (obs-1).',
      decidedBy: 'answer',
    });
    expect(checks(w)).toEqual([]);
    expect(w.commands).toEqual([]);
  });

  it('a model cannot take a check_ call id: its call is renamed, and gatehouse still runs the real check', async () => {
    const w = world();
    let turn = 0;
    const provider: ModelProvider = {
      id: 'fake',
      async *stream() {
        const usage = { inputTokens: 1, outputTokens: 1 };
        turn++;
        if (turn === 1) {
          const call = { id: 'check_1', name: 'write_file', input: { path: 'src/add.js', content: FIXED } };
          yield { type: 'done', text: '', toolCalls: [call], usage, stopReason: 'tool_use' };
        } else yield { type: 'done', text: 'Fixed (obs-1).', toolCalls: [], usage, stopReason: 'end_turn' };
      },
    };
    const outcome = await stretch(w, provider);
    expect(outcome).toMatchObject({ status: 'final', decidedBy: 'check' });
    const intents = ofType(w, 'tool.intent').map((e) => [e.actor, e.data.callId]);
    expect(intents[0]![1]).not.toMatch(/^check_/);
    expect(intents[1]).toEqual(['runtime', 'check_1']);
  });
});
