import { createAccount, createUser, encodeUser, fmtCreds, fromSeed } from '@nats-io/jwt';
import { sign } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeUserJwt, formatCreds, newUserKey, signerFromSeed } from '../../src/sandbox/nkey-jwt';

const text = (b: Uint8Array): string => new TextDecoder().decode(b);

describe('native nkey JWTs', () => {
  afterEach(() => vi.useRealTimers());

  it('signs a user JWT byte for byte as @nats-io/jwt does, from the same seeds', async () => {
    vi.useFakeTimers({ now: new Date('2025-03-01T12:00:00Z'), toFake: ['Date'] });
    const account = createAccount();
    const user = createUser();
    const permissions = {
      pub: { allow: ['gh.run_a.sbx_b.ready', 'gh.run_a.sbx_b.output.*'] },
      sub: { allow: ['gh.run_a.sbx_b.invoke'] },
      resp: { max: 1, ttl: 0 },
      subs: 16,
      payload: 8 * 1024 * 1024,
      data: -1,
    };
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const theirs = await encodeUser('sandbox-sbx_b', user, account, permissions, { exp });
    const ours = encodeUserJwt(
      'sandbox-sbx_b',
      user.getPublicKey(),
      signerFromSeed(text(account.getSeed())),
      permissions,
      {
        exp,
      },
    );
    expect(ours).toBe(theirs);
    // Without an expiry as well (the orchestrator's own user).
    const open = { pub: { allow: ['>'] }, sub: { allow: ['>'] } };
    expect(encodeUserJwt('orchestrator', user.getPublicKey(), signerFromSeed(text(account.getSeed())), open)).toBe(
      await encodeUser('orchestrator', user, account, open, {}),
    );
    expect(formatCreds(theirs, text(user.getSeed()))).toBe(text(fmtCreds(theirs, user)));
  });

  it('makes user keys whose seed and public key @nats-io/nkeys agrees with', () => {
    const k = newUserKey();
    expect(k.seed).toMatch(/^SU[A-Z2-7]{56}$/);
    const kp = fromSeed(new TextEncoder().encode(k.seed));
    expect(kp.getPublicKey()).toBe(k.publicKey);
    expect(signerFromSeed(k.seed).publicKey).toBe(k.publicKey);
    // A signature made natively verifies with the library's key.
    const data = new TextEncoder().encode('nonce-1234');
    expect(kp.verify(data, sign(null, data, signerFromSeed(k.seed).privateKey))).toBe(true);
    expect(newUserKey().seed).not.toBe(k.seed);
  });
});
