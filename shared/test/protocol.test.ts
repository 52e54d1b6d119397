import { describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import {
  decodeMessage,
  encodeMessage,
  invocationKeys,
  invocationPublicKey,
  Invocation,
  InvocationResult,
  sandboxPermissions,
  sandboxSubjects,
  signMessage,
  validate,
  verifyMessage,
} from '../src/index';

const valid = {
  v: 1,
  invocationId: 'inv_1',
  intentId: 'int_1',
  runId: 'run_1',
  sandboxId: 'sbx_1',
  primitive: 'read_file',
  input: { path: 'a.ts' },
  approval: { id: 'ap_1', actionHash: 'a'.repeat(64), by: 'policy' },
  timeoutMs: 1000,
  outputCap: 1024,
  signature: `${'A'.repeat(86)}==`,
};

describe('wire protocol', () => {
  it('accepts a well-formed invocation and round-trips it', () => {
    const bytes = encodeMessage(Invocation, valid as Invocation);
    const back = decodeMessage(Invocation, bytes);
    expect(back).toEqual({ ok: true, value: valid });
  });

  it.each([
    ['not JSON', new TextEncoder().encode('{nope'), ''],
    ['unknown primitive', { ...valid, primitive: 'rm_rf' }, 'primitive'],
    ['unknown input field', { ...valid, input: { path: 'a', extra: 1 } }, 'input'],
    ['input of another primitive', { ...valid, input: { command: 'ls' } }, 'input'],
    ['id with a subject wildcard', { ...valid, runId: 'run.>' }, 'runId'],
    ['zero timeout', { ...valid, timeoutMs: 0 }, 'timeoutMs'],
    ['output cap above the maximum', { ...valid, outputCap: 1e9 }, 'outputCap'],
    ['approval hash not hex', { ...valid, approval: { ...valid.approval, actionHash: 'zz' } }, 'approval.actionHash'],
  ])('rejects %s, naming the field', (_name, message, path) => {
    const result = message instanceof Uint8Array ? decodeMessage(Invocation, message) : validate(Invocation, message);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.path.startsWith(path)).toBe(true);
  });

  it('rejects an invocation without a signature, naming the field', () => {
    const { signature: _s, ...unsigned } = valid;
    const result = validate(Invocation, unsigned);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.path).toBe('signature');
  });

  it('verifies a signature over every field but itself, and nothing else', () => {
    const keys = invocationKeys();
    const pub = invocationPublicKey(keys.publicKeyPem);
    const { signature: _s, ...body } = valid;
    const signed = { ...body, signature: signMessage(body, keys.privateKey) };
    expect(verifyMessage(signed, pub)).toBe(true);
    // Key order does not matter (canonical JSON), any change to a field does.
    expect(verifyMessage(Object.fromEntries(Object.entries(signed).reverse()), pub)).toBe(true);
    expect(verifyMessage({ ...signed, input: { path: 'b.ts' } }, pub)).toBe(false);
    expect(verifyMessage({ ...signed, approval: { ...signed.approval, by: 'user' } }, pub)).toBe(false);
    expect(verifyMessage({ ...signed, extra: 1 }, pub)).toBe(false);
    expect(verifyMessage({ ...signed, signature: undefined }, pub)).toBe(false);
    expect(verifyMessage({ ...signed, signature: 'not base64' }, pub)).toBe(false);
    expect(verifyMessage([signed], pub)).toBe(false);
    expect(verifyMessage(null, pub)).toBe(false);
    // Another key's signature over the same body does not verify.
    const other = invocationKeys();
    expect(verifyMessage({ ...body, signature: signMessage(body, other.privateKey) }, pub)).toBe(false);
  });

  it('takes only an Ed25519 public key for verifying', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    expect(() => invocationPublicKey(rsa)).toThrow(/not ed25519/);
    expect(() => invocationPublicKey('garbage')).toThrow();
  });

  it('refuses to encode a result that breaks its own schema', () => {
    expect(() => encodeMessage(InvocationResult, { v: 1 } as unknown as InvocationResult)).toThrow();
  });

  it('scopes subjects and permissions to one run and sandbox', () => {
    const s = sandboxSubjects('run_a', 'sbx_a');
    expect(s.invoke).toBe('gh.run_a.sbx_a.invoke');
    expect(s.output('inv_1')).toBe('gh.run_a.sbx_a.output.inv_1');
    expect(() => sandboxSubjects('run.*', 'sbx')).toThrow();
    expect(() => s.output('inv.>')).toThrow();
    const p = sandboxPermissions('run_a', 'sbx_a');
    expect([...p.publish, ...p.subscribe].every((subject) => subject.startsWith('gh.run_a.sbx_a.'))).toBe(true);
    expect(p.publish).not.toContain(s.invoke);
  });
});
