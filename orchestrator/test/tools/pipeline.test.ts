import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolRegistry } from '../../src/tools/registry';
import { defineTool } from '../../src/tools/tool';
import {
  DENIED,
  harness,
  observed,
  pause,
  policyOf,
  RAN,
  REJECTED,
  scriptedChannel,
  stoppedAfter,
} from './pipeline-harness';

const FILES = { 'a.txt': 'one\ntwo\n', 'b.txt': 'three\n' };

describe('the pipeline as a whole: each call ends in exactly one observation, or pending', () => {
  it('read then edit: the events of each call in order, each caused by the one before', async () => {
    const h = harness({ sandbox: { files: FILES } });
    const read = await h.call('read_file', { path: 'a.txt' });
    expect(read.content).toContain('one');
    const edit = await h.call('edit_file', { path: 'a.txt', oldText: 'two', newText: 'deux' });
    expect(edit.outcome).toBe('ok');
    expect(h.sandbox.workspace.files.get('a.txt')).toBe('one\ndeux\n');
    for (const callId of ['call_1', 'call_2']) {
      const events = h.eventsOf(callId);
      expect(events.map((e) => e.type)).toEqual(RAN);
      for (let i = 1; i < events.length; i++) expect(events[i]!.causationId).toBe(events[i - 1]!.id);
    }
    expect([read.id, edit.id]).toEqual(['obs-1', 'obs-2']);
    // The observation returned is the one on record.
    expect(h.event<{ content: string }>('tool.observation').content).toBe(edit.content);
  });

  it('rejected, denied and run calls side by side keep their own sequences', async () => {
    const h = harness({ sandbox: { files: FILES }, policy: policyOf({ deny: ['read_file(b.txt)'] }) });
    await h.call('nope', {});
    await h.call('read_file', { path: 'b.txt' });
    await h.call('read_file', { path: 'a.txt' });
    expect([h.types('call_1'), h.types('call_2'), h.types('call_3')]).toEqual([REJECTED, DENIED, RAN]);
    expect(h.log.events().filter((e) => e.type === 'tool.observation')).toHaveLength(3);
  });

  it('model ids that cannot be used are replaced, never thrown on', async () => {
    const h = harness({ sandbox: { files: FILES } });
    const obs = observed(
      await h.pipeline.run({
        callId: 'bad id with spaces',
        turn: -3,
        tool: 'read_file',
        input: { path: 'a.txt' },
      }),
    );
    expect(obs.callId).toMatch(/^call/);
    expect(obs.callId).not.toBe('bad id with spaces');
    expect(h.event('tool.intent', obs.callId)).toMatchObject({ turn: 0, tool: 'read_file' });
  });

  it('our own failure (a plan that throws) is one failed observation, on record, caused by the intent', async () => {
    const throwing = defineTool({
      name: 'throwing',
      description: 'plans badly',
      input: z.strictObject({}),
      sideEffect: 'read',
      isReadOnly: () => true,
      plan: () => {
        throw new Error('no plan');
      },
      observe: () => ({ ok: true, text: '', external: false }),
    });
    const h = harness({ registry: new ToolRegistry([throwing as never]), surface: ['throwing'] });
    const obs = await h.call('throwing', {});
    expect(h.types()).toEqual(['tool.intent', 'tool.validation', 'tool.observation']);
    expect(obs.outcome).toBe('failed');
    expect(obs.content).toContain('internal error in gatehouse: no plan');
    expect(h.eventsOf().at(-1)!.causationId).toBe(h.eventsOf()[0]!.id);
  });

  it('run gives a pending call as its own variant, with no observation', async () => {
    const h = harness({ policy: policyOf({ ask: ['bash(*)'] }), channel: scriptedChannel(pause) });
    const result = await h.pipeline.run({ callId: 'c1', turn: 1, tool: 'bash', input: { command: 'ls' } });
    expect(result).toEqual({
      kind: 'pending',
      callId: 'c1',
      tool: 'bash',
      requestId: h.event<{ requestId: string }>('approval.requested', 'c1').requestId,
    });
  });
});

describe('continueCall: a call a stopped run left open is finished, never run twice', () => {
  it('nothing to continue: unknown or already observed', async () => {
    const h = harness({ sandbox: { files: FILES } });
    await h.call('read_file', { path: 'a.txt' });
    expect(await h.pipeline.continueCall('call_1')).toBeUndefined();
    expect(await h.pipeline.continueCall('call_404')).toBeUndefined();
  });

  it('completed, observation lost: the recorded completion is reported, nothing runs again', async () => {
    const first = harness({ sandbox: { exec: () => ({ exitCode: 3, output: 'x' }) } });
    await first.call('bash', { command: 'make' });
    const h = harness({ resume: { events: stoppedAfter(first, 'tool.execution.completed'), sandbox: first.sandbox } });
    const obs = observed(await h.pipeline.continueCall('call_1'));
    expect(obs?.outcome).toBe('failed');
    expect(obs?.content).toContain(
      'bash ran (status failed, exit code 3) before gatehouse stopped; it is not run again',
    );
    expect(h.sandbox.executed()).toHaveLength(1);
    expect(h.types('call_1')).toEqual(RAN);
  });

  it('started, never completed: recorded lost and reported interrupted, not run again', async () => {
    const first = harness({ sandbox: { files: FILES } });
    await first.call('write_file', { path: 'c.txt', content: 'new\n' });
    const h = harness({ resume: { events: stoppedAfter(first, 'tool.execution.started'), sandbox: first.sandbox } });
    const obs = observed(await h.pipeline.continueCall('call_1'));
    expect(obs?.content).toContain('write_file was interrupted');
    expect(h.event('tool.execution.completed', 'call_1')).toMatchObject({
      status: 'lost',
      error: { code: 'interrupted' },
    });
    expect(h.sandbox.executed()).toHaveLength(1);
  });

  it('validated but not decided: reported as not run', async () => {
    const first = harness({ sandbox: { files: FILES } });
    await first.call('read_file', { path: 'a.txt' });
    const h = harness({ resume: { events: stoppedAfter(first, 'tool.validation'), sandbox: first.sandbox } });
    const obs = observed(await h.pipeline.continueCall('call_1'));
    expect(obs?.content).toContain('read_file was interrupted before it was decided; it did not run');
    expect(h.types('call_1')).toEqual(REJECTED);
  });

  it('allowed, not started: runs now, once, on the recorded decision (the policy is not asked again)', async () => {
    const first = harness({ sandbox: { files: FILES } });
    await first.call('write_file', { path: 'c.txt', content: 'new\n' });
    // The run is cut before the execution: in that world the file was never written.
    first.sandbox.workspace.remove('c.txt');
    const before = first.sandbox.executed().length;
    // Resumed under a policy that would now deny it: the recorded decision stands.
    const h = harness({
      resume: { events: stoppedAfter(first, 'tool.approval'), sandbox: first.sandbox },
      policy: policyOf({ deny: ['write_file(*)'] }),
    });
    const obs = observed(await h.pipeline.continueCall('call_1'));
    expect(obs?.outcome).toBe('ok');
    expect(h.types('call_1')).toEqual(RAN);
    const approval = h.eventsOf('call_1').find((e) => e.type === 'tool.approval')!;
    expect(h.event('tool.execution.started', 'call_1')).toMatchObject({ approvalId: approval.id });
    expect(h.sandbox.executed()).toHaveLength(before + 1);
    expect(h.sandbox.workspace.files.get('c.txt')).toBe('new\n');
  });

  it('denied, observation lost: reported as denied by policy', async () => {
    const first = harness({ sandbox: { files: FILES }, policy: policyOf({ deny: ['read_file(a.txt)'] }) });
    await first.call('read_file', { path: 'a.txt' });
    const h = harness({ resume: { events: stoppedAfter(first, 'tool.approval'), sandbox: first.sandbox } });
    const obs = observed(await h.pipeline.continueCall('call_1'));
    expect(obs).toMatchObject({
      outcome: 'denied',
      content: expect.stringContaining('read_file was denied by policy') as unknown,
    });
    expect(h.types('call_1')).toEqual(DENIED);
  });

  it('a path that now leads elsewhere: what would run differs from what was decided, so it is not run', async () => {
    const first = harness({ sandbox: { files: FILES, links: { 'l.txt': 'a.txt' } } });
    await first.call('read_file', { path: 'l.txt' });
    first.sandbox.workspace.links.set('l.txt', 'b.txt');
    const before = first.sandbox.executed().length;
    const h = harness({ resume: { events: stoppedAfter(first, 'tool.approval'), sandbox: first.sandbox } });
    const obs = observed(await h.pipeline.continueCall('call_1'));
    expect(obs?.outcome).toBe('failed');
    expect(obs?.content).toContain('what it would execute now differs from what was decided');
    expect(h.sandbox.executed()).toHaveLength(before);
  });

  it('a path that now leads outside the workspace: not run, with the reason', async () => {
    const first = harness({ sandbox: { files: FILES, links: { 'l.txt': 'a.txt' } } });
    await first.call('read_file', { path: 'l.txt' });
    first.sandbox.workspace.links.set('l.txt', '/etc/passwd');
    const h = harness({ resume: { events: stoppedAfter(first, 'tool.approval'), sandbox: first.sandbox } });
    const obs = observed(await h.pipeline.continueCall('call_1'));
    expect(obs?.content).toMatch(/read_file was not run: .*outside the workspace.*Propose it again/s);
  });

  it('asked, stopped before the request was recorded: the request is made now and put to the channel', async () => {
    const first = harness({
      policy: policyOf({ ask: ['bash(*)'] }),
      channel: scriptedChannel(pause),
      sandbox: { exec: () => ({}) },
    });
    await first.callResult('bash', { command: 'ls' });
    const channel = scriptedChannel({ decision: 'grant', scope: 'once', approver: 'user:later', channel: 'terminal' });
    const h = harness({
      resume: { events: stoppedAfter(first, 'tool.approval'), sandbox: first.sandbox },
      policy: policyOf({ ask: ['bash(*)'] }),
      channel,
    });
    const obs = observed(await h.pipeline.continueCall('call_1'));
    expect(obs?.outcome).toBe('ok');
    const approval = h.eventsOf('call_1').find((e) => e.type === 'tool.approval')!;
    const requested = h.eventsOf('call_1').find((e) => e.type === 'approval.requested')!;
    expect(requested.causationId).toBe(approval.id);
    expect(requested.data).toMatchObject({ rule: expect.stringContaining('bash(*)') as unknown });
    expect(channel.asked).toHaveLength(1);
  });
});
