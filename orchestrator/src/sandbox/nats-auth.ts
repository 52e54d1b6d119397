import { createAccount, createOperator, encodeAccount, encodeOperator, fromSeed } from '@nats-io/jwt';
import { z } from 'zod';
import {
  APPROVALS_TOKEN,
  approvalSubjects,
  NATS_MAX_PAYLOAD,
  sandboxPermissions,
  poolIdentitySubject,
  poolWaitingSubject,
  SUBJECT_ROOT,
} from '@gatehouse/shared';
import { encodeUserJwt, formatCreds, newUserKey, signerFromSeed, type UserPermissions } from './nkey-jwt';

/**
 * NATS decentralized auth. The server trusts one operator; the operator signs a system account and
 * the gatehouse account; the gatehouse account signs users. Users are minted per sandbox on the fly
 * (the server needs no reload), each allowed only its own run's subjects.
 */
export const NatsIdentity = z.object({
  v: z.literal(1),
  operatorSeed: z.string().startsWith('SO'),
  systemAccountSeed: z.string().startsWith('SA'),
  accountSeed: z.string().startsWith('SA'),
});
export type NatsIdentity = z.infer<typeof NatsIdentity>;

export function newIdentity(): NatsIdentity {
  const seed = (kp: { getSeed(): Uint8Array }) => new TextDecoder().decode(kp.getSeed());
  return {
    v: 1,
    operatorSeed: seed(createOperator()),
    systemAccountSeed: seed(createAccount()),
    accountSeed: seed(createAccount()),
  };
}

const kp = (seed: string) => fromSeed(new TextEncoder().encode(seed));

export function operatorPublicKey(id: NatsIdentity): string {
  return kp(id.operatorSeed).getPublicKey();
}

/** The server configuration: the operator, both accounts preloaded, payload limit. */
export async function serverConfig(id: NatsIdentity): Promise<string> {
  const operator = kp(id.operatorSeed);
  const system = kp(id.systemAccountSeed);
  const account = kp(id.accountSeed);
  const operatorJwt = await encodeOperator('gatehouse', operator, { system_account: system.getPublicKey() });
  const systemJwt = await encodeAccount('SYS', system, {}, { signer: operator });
  const accountJwt = await encodeAccount(
    'gatehouse',
    account,
    { limits: { conn: -1, subs: -1, payload: NATS_MAX_PAYLOAD, data: -1 } },
    { signer: operator },
  );
  return [
    '# written by gatehouse; regenerated when the NATS container is recreated',
    'port: 4222',
    `max_payload: ${NATS_MAX_PAYLOAD}`,
    `operator: ${operatorJwt}`,
    `system_account: ${system.getPublicKey()}`,
    'resolver: MEMORY',
    'resolver_preload: {',
    `  ${system.getPublicKey()}: ${systemJwt}`,
    `  ${account.getPublicKey()}: ${accountJwt}`,
    '}',
    '',
  ].join('\n');
}

// Signed natively (nkey-jwt.ts): a warm pool's claim mints a user on its critical path.
function userCreds(
  id: NatsIdentity,
  name: string,
  permissions: UserPermissions,
  expiresInSeconds?: number,
): Promise<string> {
  const user = newUserKey();
  const exp = expiresInSeconds === undefined ? undefined : Math.floor(Date.now() / 1000) + expiresInSeconds;
  const jwt = encodeUserJwt(name, user.publicKey, signerFromSeed(id.accountSeed), permissions, exp ? { exp } : {});
  return Promise.resolve(formatCreds(jwt, user.seed));
}

/** The orchestrator's own user: the whole gatehouse account. */
export function orchestratorCreds(id: NatsIdentity): Promise<string> {
  return userCreds(id, 'orchestrator', { pub: { allow: ['>'] }, sub: { allow: ['>'] } });
}

/**
 * A sandbox's user: subscribe to its own invoke and cancel subjects, publish its own ready,
 * heartbeat and output subjects, and reply only to requests it received (`resp`), never to an
 * arbitrary inbox. Valid for a day at most.
 */
export function sandboxCreds(id: NatsIdentity, runId: string, sandboxId: string): Promise<string> {
  const p = sandboxPermissions(runId, sandboxId);
  return userCreds(
    id,
    `sandbox-${sandboxId}`,
    {
      pub: { allow: p.publish },
      sub: { allow: p.subscribe },
      resp: { max: 1, ttl: 0 },
      subs: 16,
      payload: NATS_MAX_PAYLOAD,
      data: -1,
    },
    24 * 3600,
  );
}

/**
 * A pooled sandbox's one-time user, bound when the pool starts it: it may receive on its own
 * identity subject (`gh._pool.<sandboxId>.identity`), answer the one request it gets there, and
 * say on its own `…waiting` subject that it listens; nothing else. The claim hands the run's identity over that
 * subject; the daemon then connects as the run's user and closes this one (docs/warm-pool.md).
 * Valid for a day at most, as long as a pooled sandbox waits for its claim.
 */
export function poolBootstrapCreds(id: NatsIdentity, sandboxId: string): Promise<string> {
  return userCreds(
    id,
    `pool-${sandboxId}`,
    {
      pub: { allow: [poolWaitingSubject(sandboxId)] },
      sub: { allow: [poolIdentitySubject(sandboxId)] },
      resp: { max: 1, ttl: 0 },
      subs: 1,
      payload: NATS_MAX_PAYLOAD,
      data: -1,
    },
    24 * 3600,
  );
}

/**
 * An approver client's user (a web page, a chat bot, `gatehouse approve --nats`): it may watch
 * requests, list pending ones and send answers — of one run, or of every run — and nothing else.
 * Its answers still count only when signed by a key the run's policy lists.
 */
export function approverCreds(id: NatsIdentity, runId?: string, expiresInSeconds = 24 * 3600): Promise<string> {
  // approvalSubjects validates the run id; the wildcard form covers every run.
  const base = runId
    ? approvalSubjects(runId).pending.replace(/\.pending$/, '')
    : `${SUBJECT_ROOT}.*.${APPROVALS_TOKEN}`;
  return userCreds(
    id,
    `approver${runId ? `-${runId}` : ''}`,
    {
      pub: { allow: [`${base}.answer.*`, `${base}.pending`] },
      sub: { allow: [`${base}.requests`, '_INBOX.>'] },
      subs: 16,
      payload: NATS_MAX_PAYLOAD,
      data: -1,
    },
    expiresInSeconds,
  );
}
