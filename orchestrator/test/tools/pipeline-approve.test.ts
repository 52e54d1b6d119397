import { describe, expect, it } from 'vitest';
import { approve } from '../../src/approval/approve';
import { decide, type AskCall } from '../../src/tools/pipeline/decide';
import { record } from '../../src/tools/pipeline/record';
import { validate } from '../../src/tools/pipeline/validate';
import {
  deny,
  grant,
  harness,
  observed,
  pause,
  policyOf,
  RAN,
  scriptedChannel,
  type Harness,
} from './pipeline-harness';

const POLICY = { ask: ['bash(echo hi*)', 'write_file(config/**)'] };
const ASKED = ['tool.intent', 'tool.validation', 'tool.approval', 'approval.requested'];

async function asked(h: Harness, callId: string, input: unknown): Promise<AskCall> {
  const intent = record(h.deps, 'tool.intent', 'model', { callId, turn: 1, tool: 'bash', input }, null);
  const v = await validate(h.deps, { callId, turn: 1, tool: 'bash', input }, 'bash', intent);
  if (v.kind !== 'valid') throw new Error('expected a valid call');
  const d = decide(h.deps, v);
  if (d.kind !== 'ask') throw new Error(`expected an ask, got ${d.kind}`);
  return d;
}

const echo = { exec: () => ({ output: 'hi\n' }) };

describe('approve phase: asking a channel, recording the grant or the denial', () => {
  it('granted: approval.granted is on disk before anything runs; ready, the person as grantor', async () => {
    const channel = scriptedChannel(grant());
    const h = harness({ sandbox: echo, policy: policyOf(POLICY), channel });
    const input = { command: 'echo hi' };
    const a = await approve(h.deps, { callId: 'c1', tool: 'bash', input }, await asked(h, 'c1', input));
    expect(a.kind).toBe('ready');
    if (a.kind !== 'ready') return;
    const granted = h.eventsOf('c1').at(-1)!;
    expect(h.types('c1')).toEqual([...ASKED, 'approval.granted']);
    expect(a.grant).toEqual({ eventId: granted.id, executionHash: expect.any(String) as unknown, by: 'user' });
    expect(h.log.isDurable(granted.id)).toBe(true);
    // The channel saw the request as recorded, with a preview for a person.
    const requested = h.event<{ requestId: string; actionHash: string }>('approval.requested', 'c1');
    expect(channel.asked).toMatchObject([
      {
        requestId: requested.requestId,
        tool: 'bash',
        actionHash: requested.actionHash,
        preview: expect.any(String) as unknown,
      },
    ]);
    expect(h.sandbox.executed()).toEqual([]);
  });

  it('the request is on disk before the channel is asked', async () => {
    let durableWhenAsked: boolean | undefined;
    const h = harness({
      sandbox: echo,
      policy: policyOf(POLICY),
      channel: {
        name: 'terminal',
        ask: () => {
          const requested = h.eventsOf('c1').find((e) => e.type === 'approval.requested')!;
          durableWhenAsked = h.log.isDurable(requested.id);
          return Promise.resolve(grant());
        },
      },
    });
    const input = { command: 'echo hi' };
    await approve(h.deps, { callId: 'c1', tool: 'bash', input }, await asked(h, 'c1', input));
    expect(durableWhenAsked).toBe(true);
  });

  it('denied by a person: approval.denied, then a denied observation with who and why', async () => {
    const h = harness({ sandbox: echo, policy: policyOf(POLICY), channel: scriptedChannel(deny('not today')) });
    const input = { command: 'echo hi' };
    const a = await approve(h.deps, { callId: 'c1', tool: 'bash', input }, await asked(h, 'c1', input));
    expect(a.kind).toBe('denied');
    if (a.kind !== 'denied') return;
    expect(h.types('c1')).toEqual([...ASKED, 'approval.denied', 'tool.observation']);
    expect(a.observation.outcome).toBe('denied');
    expect(a.observation.content).toContain('bash was declined by user:test: not today');
  });

  it('no channel: denied by the runtime, never left hanging', async () => {
    const h = harness({ sandbox: echo, policy: policyOf(POLICY) });
    const input = { command: 'echo hi' };
    const a = await approve(h.deps, { callId: 'c1', tool: 'bash', input }, await asked(h, 'c1', input));
    expect(a.kind).toBe('denied');
    expect(h.event('approval.denied', 'c1')).toMatchObject({ approver: 'runtime:no-approver', channel: 'headless' });
  });

  it('paused: pending on its request, with no observation and no answer recorded', async () => {
    const h = harness({ sandbox: echo, policy: policyOf(POLICY), channel: scriptedChannel(pause) });
    const input = { command: 'echo hi' };
    const a = await approve(h.deps, { callId: 'c1', tool: 'bash', input }, await asked(h, 'c1', input));
    const requested = h.event<{ requestId: string }>('approval.requested', 'c1');
    expect(a).toEqual({ kind: 'pending', callId: 'c1', tool: 'bash', requestId: requested.requestId });
    expect(h.types('c1')).toEqual(ASKED);
  });

  it('"approve for this run": the same action later is cleared by the standing grant without asking', async () => {
    const channel = scriptedChannel(grant('run'));
    const h = harness({ sandbox: echo, policy: policyOf(POLICY), channel });
    const input = { command: 'echo hi' };
    await approve(h.deps, { callId: 'c1', tool: 'bash', input }, await asked(h, 'c1', input));
    const first = h.eventsOf('c1').at(-1)!;
    const again = await approve(h.deps, { callId: 'c2', tool: 'bash', input }, await asked(h, 'c2', input));
    expect(again).toMatchObject({ kind: 'ready', grant: { eventId: first.id, by: 'user' } });
    expect(channel.asked).toHaveLength(1);
    expect(h.types('c2')).toEqual(['tool.intent', 'tool.validation', 'tool.approval']);
  });
});

describe('approval through the pipeline, and after a pause', () => {
  it('pending, then granted on the log (as `gatehouse approve` does): continueCall runs it once', async () => {
    const h = harness({ sandbox: echo, policy: policyOf(POLICY), channel: scriptedChannel(pause) });
    const result = await h.callResult('bash', { command: 'echo hi' });
    const requested = h.event<{ requestId: string; actionHash: string; executionHash: string }>('approval.requested');
    expect(result).toEqual({ kind: 'pending', callId: h.lastCallId(), tool: 'bash', requestId: requested.requestId });
    expect(h.types()).not.toContain('tool.observation');
    const granted = h.log.append(
      'approval.granted',
      'user',
      {
        requestId: requested.requestId,
        callId: h.lastCallId(),
        actionHash: requested.actionHash,
        executionHash: requested.executionHash,
        scope: 'once',
        approver: 'user:cli',
        channel: 'cli',
        reason: '',
      },
      { causationId: h.eventsOf().at(-1)!.id },
    );
    h.tracker.apply(granted);
    const resumed = observed(await h.pipeline.continueCall(h.lastCallId()));
    expect(resumed).toMatchObject({ outcome: 'ok', id: expect.stringMatching(/^obs-/) as unknown });
    expect(h.types()).toEqual([
      ...ASKED,
      'approval.granted',
      'tool.execution.started',
      'tool.execution.completed',
      'tool.observation',
    ]);
    expect(h.event('tool.execution.started')).toMatchObject({ approvalId: granted.id });
    expect(h.sandbox.executed()).toMatchObject([{ primitive: 'exec', approval: { id: granted.id, by: 'user' } }]);
    expect(await h.pipeline.continueCall(h.lastCallId())).toBeUndefined();
  });

  it('pending, then declined on the log: continueCall reports the decline and runs nothing', async () => {
    const h = harness({ sandbox: echo, policy: policyOf(POLICY), channel: scriptedChannel(pause) });
    await h.callResult('bash', { command: 'echo hi' });
    const requested = h.event<{ requestId: string; actionHash: string }>('approval.requested');
    h.tracker.apply(
      h.log.append('approval.denied', 'user', {
        requestId: requested.requestId,
        callId: h.lastCallId(),
        actionHash: requested.actionHash,
        approver: 'user:cli',
        channel: 'cli',
        reason: 'wrong branch',
      }),
    );
    const resumed = observed(await h.pipeline.continueCall(h.lastCallId()));
    expect(resumed?.outcome).toBe('denied');
    expect(resumed?.content).toContain('declined by user:cli: wrong branch');
    expect(h.sandbox.executed()).toEqual([]);
  });

  it('pending, still unanswered on resume: the same request is asked again, not a new one', async () => {
    const channel = scriptedChannel(pause, grant());
    const h = harness({ sandbox: echo, policy: policyOf(POLICY), channel });
    await h.callResult('bash', { command: 'echo hi' });
    const resumed = observed(await h.pipeline.continueCall(h.lastCallId()));
    expect(resumed?.outcome).toBe('ok');
    expect(channel.asked.map((p) => p.requestId)).toEqual([channel.asked[0]!.requestId, channel.asked[0]!.requestId]);
    expect(h.types().filter((t) => t === 'approval.requested')).toHaveLength(1);
  });

  it('granted through the channel: the whole sequence, each event caused by the one before', async () => {
    const h = harness({ sandbox: echo, policy: policyOf(POLICY), channel: scriptedChannel(grant()) });
    const obs = await h.call('bash', { command: 'echo hi' });
    expect(obs.outcome).toBe('ok');
    expect(obs.content).toContain('hi');
    const events = h.eventsOf();
    expect(events.map((e) => e.type)).toEqual([
      ...RAN.slice(0, 3),
      'approval.requested',
      'approval.granted',
      ...RAN.slice(3),
    ]);
    for (let i = 1; i < events.length; i++) expect(events[i]!.causationId).toBe(events[i - 1]!.id);
  });
});
