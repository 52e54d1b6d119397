import { describe, expect, it } from 'vitest';
import { actionHash, canonicalJson, sha256Hex } from '../src/index';

describe('canonical JSON and action hashing', () => {
  it('sorts keys at every depth and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } })).toBe(
      '{"a":{"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('hashes the same action the same whatever the key order', () => {
    const a = actionHash({ name: 'exec', input: { command: 'npm test', cwd: 'src' } });
    const b = actionHash({ name: 'exec', input: { cwd: 'src', command: 'npm test' } });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it('tells different actions apart', () => {
    const base = actionHash({ name: 'exec', input: { command: 'npm test' } });
    expect(actionHash({ name: 'exec', input: { command: 'npm test ' } })).not.toBe(base);
    expect(actionHash({ name: 'read_file', input: { command: 'npm test' } })).not.toBe(base);
    // Name and input cannot be shifted into each other.
    expect(actionHash({ name: 'e', input: 'xec' })).not.toBe(actionHash({ name: 'ex', input: 'ec' }));
  });

  it('refuses values JSON cannot represent exactly instead of coercing them', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(/non-finite/);
    expect(() => canonicalJson({ n: Infinity })).toThrow(/non-finite/);
    expect(() => canonicalJson({ d: new Date(0) })).toThrow(/plain objects/);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/cannot encode/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/circular/);
  });

  it('escapes strings exactly like JSON', () => {
    expect(canonicalJson({ s: 'a"b\\c\n\u0000' })).toBe(JSON.stringify({ s: 'a"b\\c\n\u0000' }));
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
