import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalAnswer, ApprovalChannel, ApprovalPrompt, Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, startDriver } from '../support/sandbox';
import { pipelineFor, policyOf } from '../support/pipeline';

/** A person who answers from a list, and remembers what they were asked. */
function person(answers: ApprovalAnswer[]): ApprovalChannel & { asked: ApprovalPrompt[] } {
  const asked: ApprovalPrompt[] = [];
  return {
    name: 'terminal',
    asked,
    ask: async (p) => (
      asked.push(p),
      answers.shift() ?? { decision: 'deny', approver: 'user:test', channel: 'terminal', reason: 'no more answers' }
    ),
  };
}
const grant = (scope: 'once' | 'run'): ApprovalAnswer => ({
  decision: 'grant',
  scope,
  approver: 'user:alice',
  channel: 'terminal',
});
const POLICY = { ask: ['bash(echo hi*)', 'write_file(config/**)'] };

describe('approval scope and binding (real sandbox)', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: 'run_approval_scope', repoDir: makeRepo() });
  });
  afterAll(async () => driver?.close());

  it('scope once: the same call asks again; scope run: the same call does not, a changed argument does', async () => {
    const once = person([grant('once'), grant('once')]);
    const h = pipelineFor(sandbox, { policy: policyOf(POLICY), channel: once });
    expect((await h.call('bash', { command: 'echo hi >> once.log' })).outcome).toBe('ok');
    expect((await h.call('bash', { command: 'echo hi >> once.log' })).outcome).toBe('ok');
    expect(once.asked).toHaveLength(2);

    const run = person([grant('run'), grant('once')]);
    const r = pipelineFor(sandbox, { policy: policyOf(POLICY), channel: run });
    expect((await r.call('bash', { command: 'echo hi >> run.log' })).outcome).toBe('ok');
    const again = await r.call('bash', { command: 'echo hi >> run.log' });
    expect(again.outcome).toBe('ok');
    expect(run.asked).toHaveLength(1);
    // The second execution is authorised by the first grant, on record.
    const grantEvent = r.log.events().find((e) => e.type === 'approval.granted')!;
    expect(r.eventsOf(r.lastCallId()).find((e) => e.type === 'tool.execution.started')!.data).toMatchObject({
      approvalId: grantEvent.id,
    });
    expect(r.eventsOf(r.lastCallId()).some((e) => e.type === 'approval.requested')).toBe(false);

    // One character different: a different action, a new request.
    expect((await r.call('bash', { command: 'echo hi >> run.log ' })).outcome).toBe('ok');
    expect(run.asked).toHaveLength(2);
    expect(run.asked[1]!.actionHash).not.toBe(run.asked[0]!.actionHash);
  });

  it('a grant binds the exact input: approving one write does not approve another path or content', async () => {
    const p = person([
      grant('run'),
      { decision: 'deny', approver: 'user:alice', channel: 'terminal', reason: 'not that file' },
    ]);
    const h = pipelineFor(sandbox, { policy: policyOf(POLICY), channel: p });
    expect((await h.call('write_file', { path: 'config/a.json', content: '{}' })).outcome).toBe('ok');
    const other = await h.call('write_file', { path: './config/../config/b.json', content: '{}' });
    expect(other.outcome).toBe('denied');
    expect(other.content).toContain('not that file');
    expect(p.asked[1]!.rule).toBe('ask[1] write_file(config/**)');
  });

  it('the approver sees the command, the rule, the reason and the risk; a deny reason reaches the model', async () => {
    const p = person([
      { decision: 'deny', approver: 'user:bob', channel: 'terminal', reason: 'use the fixture instead' },
    ]);
    const h = pipelineFor(sandbox, { policy: policyOf(POLICY), channel: p });
    const obs = await h.call('bash', { command: 'echo hi | tee -a x.log' });
    expect(p.asked[0]).toMatchObject({
      tool: 'bash',
      preview: 'echo hi | tee -a x.log',
      rule: 'ask[0] bash(echo hi*)',
    });
    expect(p.asked[0]!.risk.join('\n')).toContain('tee');
    expect(obs.outcome).toBe('denied');
    expect(obs.content).toContain('use the fixture instead');
    expect(h.eventsOf(h.lastCallId()).map((e) => e.type)).toEqual([
      'tool.intent',
      'tool.validation',
      'tool.approval',
      'approval.requested',
      'approval.denied',
      'tool.observation',
    ]);
  });
});
