import { describe, expect, it } from 'vitest';
import { undecidedReply } from '../../src/loop/undecided-reply';
import { BROKEN, checks, feedback, final, fix, ofType, stretch, world, type World } from './final-check-harness';

/**
 * A worker killed between the model's text reply and the run's end (the soak of 10:01 found one):
 * the resumed run decides on that reply as it would have, and never asks the model again. Each case
 * runs a stretch as drive.ts does (which records run.completed after it; a stretch alone leaves the
 * log exactly as a kill before that does), then resumes with the same script, now used up.
 */
const requests = (w: World) => ofType(w, 'model.request').length;
const breakAndAnswer = {
  turns: [{ toolCalls: [{ name: 'write_file', input: { path: 'src/add.js', content: BROKEN } }] }],
};

describe('resuming after the model answered', () => {
  it('an accepted answer, no check: the resumed run ends final with it, without a model request', async () => {
    const w = world();
    const script = { turns: [fix, final('Fixed add() in src/add.js (obs-1).')] };
    expect(await stretch(w, script, { check: null })).toMatchObject({ status: 'final' });
    // Resumed twice over, as a second kill would: each time the same answer, no request.
    w.log.append('run.resumed', 'user', { fromSeq: w.log.events().length - 1, workspaceFrom: 'checkpoint', files: [] });
    for (let i = 0; i < 2; i++) {
      const before = requests(w);
      const resumed = await stretch(w, script, { check: null, resume: true });
      expect(resumed).toEqual({
        status: 'final',
        stopReason: 'final_answer',
        answer: 'Fixed add() in src/add.js (obs-1).',
        decidedBy: 'answer',
      });
      expect(requests(w)).toBe(before);
    }
  });

  it('an answer the check then passed (run.check recorded): final by the check, the check not run again', async () => {
    const w = world();
    const script = { turns: [fix, final('Fixed (obs-1).')] };
    expect(await stretch(w, script)).toMatchObject({ status: 'final', decidedBy: 'check' });
    const ran = w.sandbox.calls.length;
    const resumed = await stretch(w, script, { resume: true });
    expect(resumed).toMatchObject({ status: 'final', answer: 'Fixed (obs-1).', decidedBy: 'check' });
    expect(checks(w)).toHaveLength(1);
    expect(w.sandbox.calls.length).toBe(ran);
  });

  it('an answer the check failed a first time, killed before the feedback: the feedback is sent once', async () => {
    const w = world();
    const script = { turns: [...breakAndAnswer.turns, final('Done (obs-1).'), final('Done again (obs-1).')] };
    // Two turns of the script: the check fails and its feedback goes back.
    const first = await stretch(w, { turns: script.turns.slice(0, 2) });
    expect(first.status).toBe('failed');
    expect(first.stopReason).toContain('script_exhausted');
    expect(feedback(w).filter((f) => f.kind === 'check')).toHaveLength(1);
    // The same log without that feedback and what followed it: as a kill right after run.check leaves it.
    const cut = w.log.events().findIndex((e) => e.type === 'run.feedback');
    const w2 = world();
    for (const e of w.log.events().slice(1, cut))
      w2.log.append(e.type as never, e.actor, e.data as never, { causationId: e.causationId });
    const resumed = await stretch(w2, script, { resume: true });
    // The feedback sent now, the model asked for its third turn, the check fails again: partial.
    expect(feedback(w2).filter((f) => f.kind === 'check')).toHaveLength(1);
    expect(resumed).toMatchObject({ status: 'partial', stopReason: 'check_failed', answer: 'Done again (obs-1).' });
    expect(checks(w2).map((c) => c.passed)).toEqual([false, false]);
  });

  it('an unsupported answer: the contract feedback is sent on resume, then the model is asked', async () => {
    const w = world();
    // Claims a test run there is no observation of.
    const script = { turns: [fix, final('All tests pass.'), final('Fixed add() in src/add.js (obs-1).')] };
    expect(await stretch(w, { turns: script.turns.slice(0, 2) }, { check: null })).toMatchObject({
      status: 'failed',
    });
    const cut = w.log.events().findIndex((e) => e.type === 'run.feedback');
    const w2 = world();
    for (const e of w.log.events().slice(1, cut))
      w2.log.append(e.type as never, e.actor, e.data as never, { causationId: e.causationId });
    const resumed = await stretch(w2, script, { check: null, resume: true });
    expect(feedback(w2).map((f) => f.kind)).toEqual(['contract']);
    expect(resumed).toMatchObject({ status: 'final', answer: 'Fixed add() in src/add.js (obs-1).' });
  });

  it('a reply with tool calls, or one already acted on, is not undecided', () => {
    const w = world();
    expect(undecidedReply(w.log.events())).toBeUndefined();
    w.log.append('model.output', 'model', {
      turn: 1,
      text: 'Done.',
      toolCalls: [],
      stopReason: 'end_turn',
      usage: { inputTokens: 1, outputTokens: 1 },
      retries: 0,
    });
    expect(undecidedReply(w.log.events())).toEqual({ turn: 1, text: 'Done.', stopReason: 'end_turn' });
    w.log.append('run.feedback', 'runtime', { turn: 1, kind: 'contract', reason: 'say which observation' });
    expect(undecidedReply(w.log.events())).toBeUndefined();
  });
});
