import { describe, expect, it } from 'vitest';
import { actionHash, MAX_OUTPUT_CAP, type ErrorCode } from '@gatehouse/shared';
import { invocation, sendRaw, sh } from '../support/sandbox';
import { FILES, useSandbox, catFile } from '../support/primitives';

/** Bad input at the NATS boundary, against a real sandbox. */

describe('bad input at the NATS boundary', () => {
  const t = useSandbox();

  /** An exec that leaves a trace if it runs, so every refused one can be checked not to have. */
  const tracer = (name: string) => ({ command: `touch /workspace/ran-${name}` });
  const inv = (name: string, extra: Record<string, unknown> = {}) => invocation(t.sandbox, 'exec', tracer(name), extra);

  interface BadCase {
    name: string;
    message: () => unknown;
    code: ErrorCode;
    /** error.path, when the refusal names a field. */
    field?: string;
    /** Words the message must contain (naming the field or what is wrong). */
    says: RegExp | (() => RegExp);
  }

  const cases: BadCase[] = [
    { name: 'not JSON', message: () => '{nope', code: 'invalid_message', says: /not JSON/ },
    { name: 'empty message', message: () => new Uint8Array(0), code: 'invalid_message', says: /not JSON/ },
    { name: 'a JSON array', message: () => '[1,2,3]', code: 'invalid_message', says: /\(root\).*object/i },
    { name: 'null', message: () => 'null', code: 'invalid_message', says: /\(root\)/ },
    { name: 'a JSON string', message: () => '"read_file"', code: 'invalid_message', says: /\(root\)/ },
    // The approval is looked for before the schema, so an empty object is refused for lacking one.
    { name: 'an empty object', message: () => ({}), code: 'approval_missing', field: 'approval', says: /approval/ },
    {
      name: 'an unknown primitive',
      message: () => ({ ...inv('unknown-primitive'), primitive: 'rm_rf' }),
      code: 'invalid_message',
      field: 'primitive',
      says: /^primitive: /,
    },
    {
      name: 'an unknown field in input (strict schema)',
      message: () => invocation(t.sandbox, 'exec', { ...tracer('extra-input'), sudo: true }),
      code: 'invalid_message',
      field: 'input',
      says: /sudo/,
    },
    {
      name: 'an unknown top-level field',
      message: () => inv('extra-top', { privileged: true }),
      code: 'invalid_message',
      says: /privileged/,
    },
    {
      name: 'a wrong field type in input',
      message: () => invocation(t.sandbox, 'read_file', { path: 42 }),
      code: 'invalid_message',
      field: 'input.path',
      says: /^input\.path: .*string/,
    },
    {
      name: 'a wrong type for trackChanges',
      message: () => invocation(t.sandbox, 'exec', { ...tracer('bad-bool'), trackChanges: 'yes' }),
      code: 'invalid_message',
      field: 'input.trackChanges',
      says: /^input\.trackChanges: .*boolean/,
    },
    {
      name: 'a string timeoutMs',
      message: () => inv('string-timeout', { timeoutMs: '1000' }),
      code: 'invalid_message',
      field: 'timeoutMs',
      says: /^timeoutMs: /,
    },
    {
      name: 'a missing approval',
      message: () => {
        const m = inv('no-approval');
        delete m.approval;
        return m;
      },
      code: 'approval_missing',
      field: 'approval',
      says: /approval/,
    },
    {
      name: 'an approval for a different action',
      message: () =>
        inv('mismatch', {
          approval: {
            id: 'test',
            actionHash: actionHash({ name: 'exec', input: { command: 'echo harmless' } }),
            by: 'policy',
          },
        }),
      code: 'approval_mismatch',
      field: 'approval.actionHash',
      says: /different action/,
    },
    {
      name: 'an approval for the same input under another primitive',
      message: () => {
        const input = { path: 'README.md', content: 'owned\n' };
        return invocation(t.sandbox, 'write_file', input, {
          approval: { id: 'test', actionHash: actionHash({ name: 'read_file', input }), by: 'policy' },
        });
      },
      code: 'approval_mismatch',
      field: 'approval.actionHash',
      says: /different action/,
    },
    {
      name: 'an approval by an unknown authority',
      message: () =>
        inv('bad-by', {
          approval: { id: 'x', actionHash: actionHash({ name: 'exec', input: tracer('bad-by') }), by: 'root' },
        }),
      code: 'invalid_message',
      field: 'approval.by',
      says: /^approval\.by: /,
    },
    {
      name: 'a malformed actionHash',
      message: () => inv('bad-hash', { approval: { id: 'x', actionHash: 'abc', by: 'policy' } }),
      code: 'invalid_message',
      field: 'approval.actionHash',
      says: /^approval\.actionHash: /,
    },
    {
      name: 'another runId in the body',
      message: () => inv('wrong-run', { runId: 'run_someone_else' }),
      code: 'wrong_sandbox',
      field: 'runId',
      says: () => new RegExp(`^runId .*serves run ${t.sandbox.runId} sandbox ${t.sandbox.sandboxId}$`),
    },
    {
      name: 'another sandboxId in the body',
      message: () => inv('wrong-sbx', { sandboxId: 'sbx_someone_else' }),
      code: 'wrong_sandbox',
      field: 'sandboxId',
      says: () => new RegExp(`^sandboxId .*serves run ${t.sandbox.runId} sandbox ${t.sandbox.sandboxId}$`),
    },
    {
      name: 'timeoutMs 0',
      message: () => inv('timeout-0', { timeoutMs: 0 }),
      code: 'invalid_message',
      field: 'timeoutMs',
      says: /^timeoutMs: /,
    },
    {
      name: 'a negative timeoutMs',
      message: () => inv('timeout-neg', { timeoutMs: -1000 }),
      code: 'invalid_message',
      field: 'timeoutMs',
      says: /^timeoutMs: /,
    },
    {
      name: 'a fractional timeoutMs',
      message: () => inv('timeout-frac', { timeoutMs: 1.5 }),
      code: 'invalid_message',
      field: 'timeoutMs',
      says: /^timeoutMs: /,
    },
    {
      name: 'outputCap above the maximum',
      message: () => inv('cap', { outputCap: MAX_OUTPUT_CAP + 1 }),
      code: 'invalid_message',
      field: 'outputCap',
      says: /^outputCap: /,
    },
    {
      name: 'an invocationId with a dot',
      message: () => inv('dot', { invocationId: 'inv.1' }),
      code: 'invalid_message',
      field: 'invocationId',
      says: /^invocationId: /,
    },
    {
      name: 'an invocationId with a * wildcard',
      message: () => inv('star', { invocationId: 'inv*' }),
      code: 'invalid_message',
      field: 'invocationId',
      says: /^invocationId: /,
    },
    {
      name: 'an invocationId that is the > wildcard',
      message: () => inv('gt', { invocationId: '>' }),
      code: 'invalid_message',
      field: 'invocationId',
      says: /^invocationId: /,
    },
    {
      name: 'protocol version 2',
      message: () => inv('v2', { v: 2 }),
      code: 'invalid_message',
      field: 'v',
      says: /^v: /,
    },
    {
      name: 'an env variable with a bad name',
      message: () => invocation(t.sandbox, 'exec', { ...tracer('bad-env'), env: { 'BAD-NAME': 'x' } }),
      code: 'invalid_message',
      field: 'input.env.BAD-NAME',
      says: /^input\.env/,
    },
  ];

  it.each(cases)('$name is rejected', async ({ message, code, field, says }) => {
    const r = await sendRaw(t.driver, t.sandbox, message());
    expect(r.status).toBe('rejected');
    expect(r.error?.code).toBe(code);
    expect(r.error?.message).toMatch(typeof says === 'function' ? says() : says);
    expect(r.error?.path).toBe(field);
    expect(r.data).toBeUndefined();
    expect(r.output).toBe('');
    expect(r.replayed).toBe(false);
  });

  it('runs none of the refused actions, and still answers a normal invocation', async () => {
    expect(await sh(t.sandbox, 'ls -A /workspace | grep ^ran- || echo none')).toBe('none\n');
    expect(await catFile(t.sandbox, 'README.md')).toBe(FILES['README.md']);
    // Positive control: the same tracer, properly approved, does leave its trace.
    const r = await sendRaw(t.driver, t.sandbox, inv('control'));
    expect(r.status).toBe('ok');
    expect(await sh(t.sandbox, 'ls -A /workspace | grep ^ran-')).toBe('ran-control\n');
  });

  it('echoes the invocation id when it can, and "unknown" when the message is not JSON', async () => {
    const m = inv('echo', { timeoutMs: 0 });
    expect((await sendRaw(t.driver, t.sandbox, m)).invocationId).toBe(m.invocationId);
    expect((await sendRaw(t.driver, t.sandbox, '{nope')).invocationId).toBe('unknown');
  });
});
