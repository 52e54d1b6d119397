import { describe, expect, it } from 'vitest';
import { classifyFailure, MAX_EVIDENCE } from '../../src/plan/classify-failure';
import { FAILURE_RULES } from '../../src/plan/failure-rules';
import type { FailureInput } from '../../src/plan/plan-types';

const call = (content: string, more: Partial<Extract<FailureInput, { kind: 'call' }>> = {}): FailureInput => ({
  kind: 'call',
  tool: 'bash',
  outcome: 'failed',
  content,
  status: 'failed',
  exitCode: 1,
  ...more,
});
const check = (output: string, exitCode: number | null = 1, status?: string): FailureInput => ({
  kind: 'check',
  command: 'npm test',
  exitCode,
  output,
  ...(status ? { status } : {}),
});

describe('classifyFailure', () => {
  it.each<[string, FailureInput, string, string]>([
    ['execution timeout', call('', { status: 'timeout', exitCode: null }), 'transient', 'status timeout'],
    ['check timeout', check('', null, 'timeout'), 'transient', 'status timeout'],
    ['connection refused', call('connect ECONNREFUSED 127.0.0.1:5432'), 'transient', 'ECONNREFUSED'],
    ['reset', call('read ECONNRESET'), 'transient', 'ECONNRESET'],
    ['ETIMEDOUT', call('Error: connect ETIMEDOUT 10.0.0.1:443'), 'transient', 'ETIMEDOUT'],
    ['EAI_AGAIN', check('getaddrinfo EAI_AGAIN registry.npmjs.org'), 'transient', 'EAI_AGAIN'],
    ['unreachable', call('connect: Network is unreachable'), 'transient', 'Network is unreachable'],
    ['HTTP 503', call('< HTTP/1.1 503 Service Unavailable'), 'transient', 'HTTP/1.1 503'],
    ['status 502', call('request failed with status 502'), 'transient', 'status 502'],
    ['429', call('Error: 429 Too Many Requests'), 'transient', '429 Too Many Requests'],
    ['curl 500', call('curl: (22) The requested URL returned error: 500'), 'transient', 'returned error: 500'],
    [
      'gate denied',
      call('denied by deny[0]', { outcome: 'denied' }),
      'permission',
      'outcome denied: denied by deny[0]',
    ],
    ['401', call('HTTP/1.1 401 Unauthorized'), 'permission', 'HTTP/1.1 401'],
    ['403', check('403 Forbidden'), 'permission', '403 Forbidden'],
    ['Unauthorized', call('error: Unauthorized'), 'permission', 'Unauthorized'],
    ['Permission denied', call('sh: ./x: Permission denied'), 'permission', 'Permission denied'],
    ['EACCES', call("EACCES: permission denied, open 'a'"), 'permission', 'EACCES'],
    ['EPERM', call('Error: EPERM: operation not permitted'), 'permission', 'EPERM'],
    [
      'schema',
      call('path: required', { outcome: 'rejected', stage: 'schema' }),
      'invalid_input',
      'rejected at schema: path: required',
    ],
    [
      'plan deviation',
      call('outside task t2', { outcome: 'rejected', stage: 'plan' }),
      'invalid_input',
      'rejected at plan: outside task t2',
    ],
    ['summary', { kind: 'summary', reason: 'cites obs-99' }, 'invalid_input', 'summary refused: cites obs-99'],
    ['check fails', check('2 failing'), 'logic', 'check `npm test` exited 1'],
    ['call exits', call('no such file', { exitCode: 2 }), 'logic', 'bash exited 2'],
    ['lost', call('', { status: 'lost', exitCode: null }), 'unrecoverable', 'status lost (the sandbox was lost)'],
    [
      'internal error',
      call('internal error: boom', { status: 'error', exitCode: null }),
      'unknown',
      'bash failed (status error, no exit code): internal error: boom',
    ],
    [
      'aborted',
      call('', { status: 'aborted', exitCode: null }),
      'unknown',
      'bash failed (status aborted, no exit code)',
    ],
    ['check without exit', check('', null), 'unknown', 'check `npm test` (no status, no exit code)'],
  ])('%s', (_name, f, cls, evidence) => {
    expect(classifyFailure(f)).toEqual({ class: cls, evidence });
  });

  it.each<[string, FailureInput]>([
    ['a file named 403.md', call('cat: docs/403.md: No such file or directory', { exitCode: 1 })],
    ['a line number 500 in grep output', call('src/a.ts:500:  return retry(x)', { exitCode: 1 })],
    ['a line number 401', check('test/a.test.ts:401:3 expected 2 to be 3')],
    ['a byte count', call('wrote 503 bytes; exit 1')],
    ['a count of tests', check('Tests: 429 passed, 1 failed')],
    ['an identifier with Unauthorized in it', check('ReferenceError: isUnauthorizedUser is not defined')],
  ])('no false positive: %s is a logic failure', (_name, f) => {
    expect(classifyFailure(f).class).toBe('logic');
  });

  it('structured facts win over words: a timeout whose output says Permission denied is transient', () => {
    expect(classifyFailure(call('Permission denied', { status: 'timeout', exitCode: null })).class).toBe('transient');
  });

  it('permission words win over transient words (asking a person is the safe side)', () => {
    expect(classifyFailure(call('HTTP/1.1 403 Forbidden after ECONNRESET')).class).toBe('permission');
  });

  it('bounds the evidence', () => {
    const c = classifyFailure(call('x'.repeat(10_000), { outcome: 'denied' }));
    expect(c.class).toBe('permission');
    expect(c.evidence.length).toBe(MAX_EVIDENCE);
  });

  it('finds signs at the end of huge output, in bounded time', () => {
    const out = `${'ok\n'.repeat(500_000)}Error: connect ECONNREFUSED 127.0.0.1:80`;
    const start = Date.now();
    expect(classifyFailure(check(out)).class).toBe('transient');
    expect(Date.now() - start).toBeLessThan(2000);
  });

  it('every rule has examples both ways, and they hold', () => {
    for (const rule of FAILURE_RULES) {
      expect(rule.examples.match.length, rule.name).toBeGreaterThan(0);
      for (const f of rule.examples.match) expect(rule.evidence(f), rule.name).toBeDefined();
      for (const f of rule.examples.notMatch) expect(rule.evidence(f), rule.name).toBeUndefined();
    }
  });
});
