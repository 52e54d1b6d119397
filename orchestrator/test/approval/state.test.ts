import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { usableGrant } from '../../src/approval/state';
import { fold } from '../../src/events/state';
import { RunLog } from '../../src/events/store';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

function log() {
  const l = RunLog.create(mkdtempSync(path.join(os.tmpdir(), 'gh-appr-state-')), 'run_appr');
  l.append('run.started', 'user', { task: 't', mode: 'confirm-novel', surface: ['bash'] });
  return l;
}
function request(l: RunLog, requestId: string, callId: string, actionHash = A) {
  l.append('tool.intent', 'model', { callId, turn: 1, tool: 'bash', input: { command: 'npm test' } });
  return l.append('approval.requested', 'runtime', {
    requestId,
    callId,
    tool: 'bash',
    input: { command: 'npm test' },
    actionHash,
    executionHash: B,
    rule: 'mode:confirm-novel',
    reason: 'r',
    risk: [],
    shape: 'bash:npm test',
    lineage: ['run_appr'],
  });
}
const grant = (requestId: string, callId: string, scope: 'once' | 'run', actionHash = A) => ({
  requestId,
  callId,
  actionHash,
  executionHash: B,
  scope,
  approver: 'user:alice',
  channel: 'cli' as const,
  reason: '',
});

describe('approval state is a fold of the log', () => {
  it('a grant counts only when it answers a pending request for the same action, from a person', () => {
    const l = log();
    request(l, 'apr_1', 'c1');
    l.append('approval.granted', 'model', grant('apr_1', 'c1', 'run')); // not a person
    l.append('approval.granted', 'user', grant('apr_9', 'c1', 'run')); // no such request
    l.append('approval.granted', 'user', grant('apr_1', 'c1', 'run', B)); // another action
    let s = fold(l.events()).approvals;
    expect(s.requests.apr_1!.status).toBe('pending');
    expect(s.runGrants).toEqual({});
    expect(usableGrant(s, A, 'apr_1')).toBeUndefined();
    const real = l.append('approval.granted', 'user', grant('apr_1', 'c1', 'once'));
    s = fold(l.events()).approvals;
    expect(s.requests.apr_1).toMatchObject({ status: 'granted', answer: { eventId: real.id, scope: 'once' } });
    // A second answer to the same request changes nothing.
    l.append('approval.denied', 'user', {
      requestId: 'apr_1',
      callId: 'c1',
      actionHash: A,
      approver: 'user:bob',
      channel: 'cli',
      reason: 'no',
    });
    expect(fold(l.events()).approvals.requests.apr_1!.status).toBe('granted');
  });

  it(
    'once: used up by the execution it allows, and never stands for the shape; run: reusable, and approves ' +
      'the shape',
    () => {
      const l = log();
      request(l, 'apr_1', 'c1');
      const once = l.append('approval.granted', 'user', grant('apr_1', 'c1', 'once'));
      let s = fold(l.events()).approvals;
      expect(usableGrant(s, A, 'apr_1')?.eventId).toBe(once.id);
      expect(s.approvedShapes.size).toBe(0);
      l.append('tool.execution.started', 'runtime', {
        callId: 'c1',
        invocationId: 'inv_1',
        executor: 'sandbox',
        primitive: 'exec',
        input: {},
        timeoutMs: 1,
        approvalId: once.id,
      });
      s = fold(l.events()).approvals;
      expect(usableGrant(s, A, 'apr_1')).toBeUndefined();
      expect(usableGrant(s, A)).toBeUndefined();

      request(l, 'apr_2', 'c2');
      const run = l.append('approval.granted', 'user', grant('apr_2', 'c2', 'run'));
      l.append('tool.execution.started', 'runtime', {
        callId: 'c2',
        invocationId: 'inv_2',
        executor: 'sandbox',
        primitive: 'exec',
        input: {},
        timeoutMs: 1,
        approvalId: run.id,
      });
      s = fold(l.events()).approvals;
      expect(usableGrant(s, A)?.eventId).toBe(run.id);
      expect(usableGrant(s, B)).toBeUndefined();
      expect([...s.approvedShapes]).toEqual(['bash:npm test']);
    },
  );
});
