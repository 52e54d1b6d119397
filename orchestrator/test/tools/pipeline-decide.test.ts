import { describe, expect, it } from 'vitest';
import { actionHash } from '@gatehouse/shared';
import { decide } from '../../src/tools/pipeline/decide';
import { record } from '../../src/tools/pipeline/record';
import { validate, type ValidCall } from '../../src/tools/pipeline/validate';
import { DENIED, harness, policyOf, type Harness } from './pipeline-harness';

const FILES = { 'a.txt': 'one\n', 'private/key.txt': 'k\n', 'config/app.json': '{}\n' };
const POLICY = { deny: ['bash(rm *)', 'read_file(private/**)'], ask: ['write_file(config/**)'] };

async function valid(h: Harness, tool: string, input: unknown): Promise<ValidCall> {
  const intent = record(h.deps, 'tool.intent', 'model', { callId: 'call_d', turn: 1, tool, input }, null);
  const v = await validate(h.deps, { callId: 'call_d', turn: 1, tool, input }, tool, intent);
  if (v.kind !== 'valid') throw new Error(`expected a valid call, got ${v.observation.content}`);
  return v;
}

const approvalOf = (h: Harness) =>
  h.event<{ decision: string; policyId: string; actionHash: string; executionHash: string; resolvedFrom?: unknown }>(
    'tool.approval',
    'call_d',
  );

describe('decide phase: the plan is hashed, the policy decides, one tool.approval records it', () => {
  it('allowed: ready, with the policy decision as the grant, bound to the hash of what will run', async () => {
    const h = harness({ sandbox: { files: FILES }, policy: policyOf(POLICY) });
    const d = decide(h.deps, await valid(h, 'read_file', { path: 'a.txt' }));
    expect(d.kind).toBe('ready');
    if (d.kind !== 'ready') return;
    const approval = h.eventsOf('call_d').at(-1)!;
    expect(approval.type).toBe('tool.approval');
    expect(d.grant).toEqual({ eventId: approval.id, executionHash: d.executionHash, by: 'policy' });
    expect(d.plan).toMatchObject({ executor: 'sandbox', primitive: 'read_file' });
    if (d.plan.executor !== 'sandbox') return;
    expect(d.executionHash).toBe(actionHash({ name: 'read_file', input: d.plan.input }));
    expect(approvalOf(h)).toMatchObject({ decision: 'allow', executionHash: d.executionHash });
    expect(approvalOf(h).actionHash).toBe(actionHash({ name: 'read_file', input: { path: 'a.txt' } }));
  });

  it('denied: the call ends with a denied observation naming the rule; nothing runs', async () => {
    const h = harness({ sandbox: { files: FILES }, policy: policyOf(POLICY) });
    const d = decide(h.deps, await valid(h, 'bash', { command: 'rm -rf src' }));
    expect(d.kind).toBe('denied');
    if (d.kind !== 'denied') return;
    expect(h.types('call_d')).toEqual(DENIED);
    expect(approvalOf(h)).toMatchObject({
      decision: 'deny',
      policyId: expect.stringContaining('bash(rm *)') as unknown,
    });
    expect(d.observation.outcome).toBe('denied');
    expect(d.observation.content).toContain('denied by policy');
    expect(d.observation.content).toContain('It was not run');
    expect(h.sandbox.executed()).toEqual([]);
  });

  it('asked: the decision and both hashes are returned for the approval phase; nothing is observed yet', async () => {
    const h = harness({ sandbox: { files: FILES }, policy: policyOf(POLICY) });
    const d = decide(h.deps, await valid(h, 'write_file', { path: 'config/new.json', content: '{}' }));
    expect(d.kind).toBe('ask');
    if (d.kind !== 'ask') return;
    expect(d.approvalId).toBe(h.eventsOf('call_d').at(-1)!.id);
    expect(d.decision).toMatchObject({
      decision: 'ask',
      policyId: expect.stringContaining('write_file(config/**)') as unknown,
    });
    expect(d.actionHash).toBe(approvalOf(h).actionHash);
    expect(d.executionHash).toBe(approvalOf(h).executionHash);
    expect(h.types('call_d')).toEqual(['tool.intent', 'tool.validation', 'tool.approval']);
  });

  it('a link to a denied path: decided on where it leads (stricter wins), recorded as resolvedFrom', async () => {
    const h = harness({
      sandbox: { files: FILES, links: { 'docs/key': '../private/key.txt' } },
      policy: policyOf(POLICY),
    });
    const d = decide(h.deps, await valid(h, 'read_file', { path: 'docs/key' }));
    expect(d.kind).toBe('denied');
    expect(approvalOf(h)).toMatchObject({
      decision: 'deny',
      resolvedFrom: { path: 'docs/key', real: 'private/key.txt' },
    });
    // The approval is bound to the input and where it led.
    expect(approvalOf(h).actionHash).toBe(
      actionHash({
        name: 'read_file',
        input: { input: { path: 'docs/key' }, resolved: [{ path: 'docs/key', real: 'private/key.txt' }] },
      }),
    );
  });
});
