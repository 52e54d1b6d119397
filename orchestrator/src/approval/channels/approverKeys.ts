import { createUser, fromPublic, fromSeed } from '@nats-io/nkeys';
import type { NatsConnection } from 'nats';
import { z } from 'zod';
import { approvalSubjects, canonicalJson, Id, PlanChanges, RecoveryChoice, Sha256Hex } from '@gatehouse/shared';

/**
 * The approver's side of approvals over NATS: keys, signing, and sending an answer. A web page or a
 * chat bot holds a user nkey seed; the orchestrator holds only the public keys it trusts. The
 * signature, not the NATS connection, is what makes an answer count: anyone able to publish on
 * the subject can send bytes, only a listed key can sign them.
 */

/** Shown in `nats:<name>:<key>` and in logs, so no colons, spaces or control characters. */
export const ApproverName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/,
    'must be 1-64 characters of A-Z a-z 0-9 _ . @ -, starting with a letter or digit',
  );

export const UserPublicKey = z
  .string()
  .regex(/^U[A-Z2-7]{55}$/, 'must be an nkey user public key (56 characters starting with U)')
  .refine(validPublicKey, 'is not a valid nkey (bad checksum)');

export const Approver = z.strictObject({ name: ApproverName, publicKey: UserPublicKey });
export type Approver = z.infer<typeof Approver>;

/**
 * One answer to one request, as it travels. Strict: an unknown field could not be covered by the signature's meaning.
 */
export const SignedAnswer = z.strictObject({
  requestId: Id,
  runId: Id,
  actionHash: Sha256Hex,
  decision: z.enum(['grant', 'deny']),
  scope: z.enum(['once', 'run']).optional(),
  reason: z.string().max(1_000).optional(),
  /** Plan mode, all signed like the rest: a plan granted with changes, an escalation's choice, a question (deny). */
  changes: PlanChanges.optional(),
  choice: RecoveryChoice.optional(),
  clarify: z.literal(true).optional(),
  approver: Approver,
  signedAt: z.iso.datetime(),
  /** base64 ed25519 signature (64 bytes) over signingBytes(every other field). */
  signature: z.base64(),
});
export type SignedAnswer = z.infer<typeof SignedAnswer>;
export type UnsignedAnswer = Omit<SignedAnswer, 'signature' | 'signedAt'>;

/** What the orchestrator replies to an answer sent with a reply subject. */
export const AnswerReply = z.union([
  z.strictObject({ ok: z.literal(true), decision: z.enum(['grant', 'deny']) }),
  z.strictObject({ ok: z.literal(false), error: z.string() }),
]);
export type AnswerReply = z.infer<typeof AnswerReply>;

export interface ApproverKey {
  name: string;
  /** Goes in the orchestrator's approver list. */
  publicKey: string;
  /** Secret: stays with the approver (page, bot, person). */
  seed: string;
}

export function newApproverKey(name: string): ApproverKey {
  const kp = createUser();
  return { name: ApproverName.parse(name), publicKey: kp.getPublicKey(), seed: new TextDecoder().decode(kp.getSeed()) };
}

/** Canonical JSON of every field but the signature: both sides compute the same bytes whatever the key order. */
export function signingBytes(answer: Omit<SignedAnswer, 'signature'> & { signature?: unknown }): Uint8Array {
  const { signature: _signature, ...signed } = answer;
  return new TextEncoder().encode(canonicalJson(signed));
}

export function signAnswer(answer: UnsignedAnswer, seed: string, now: Date = new Date()): SignedAnswer {
  const kp = fromSeed(new TextEncoder().encode(seed));
  const publicKey = kp.getPublicKey();
  if (!publicKey.startsWith('U')) throw new Error('the seed is not a user nkey seed (SU…)');
  // Catch a mix-up here, where it is cheap to explain, not as "signature does not verify" later.
  if (publicKey !== answer.approver.publicKey)
    throw new Error(`the seed is for ${publicKey}, not for the approver key ${answer.approver.publicKey}`);
  const unsigned = { ...answer, signedAt: now.toISOString() };
  const signature = Buffer.from(kp.sign(signingBytes(unsigned))).toString('base64');
  return SignedAnswer.parse({ ...unsigned, signature });
}

/** True when `answer.signature` is the approver key's signature over the other fields. Never throws. */
export function verifyAnswerSignature(answer: SignedAnswer): boolean {
  try {
    const sig = Buffer.from(answer.signature, 'base64');
    if (sig.length !== 64) return false;
    return fromPublic(answer.approver.publicKey).verify(signingBytes(answer), new Uint8Array(sig));
  } catch {
    return false;
  }
}

/**
 * Sends a signed answer and waits for the orchestrator's verdict. Resolves, never rejects for a
 * refusal: `{ ok: false, error }` says why (not pending any more, bad signature, timeout).
 */
export async function answerOverNats(
  nc: NatsConnection,
  answer: SignedAnswer,
  timeoutMs: number,
  rootRunId: string = answer.runId,
): Promise<AnswerReply> {
  // A sub-agent's request is answered on its root run's subjects, signed for its own run.
  const subject = approvalSubjects(rootRunId).answer(answer.requestId);
  let data: Uint8Array;
  try {
    const reply = await nc.request(subject, new TextEncoder().encode(JSON.stringify(answer)), { timeout: timeoutMs });
    data = reply.data;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === '503')
      return {
        ok: false,
        error:
          `request ${answer.requestId} of run ${answer.runId} is not pending (already answered, timed out, or ` +
          `never asked)`,
      };
    if (code === 'TIMEOUT') return { ok: false, error: `no reply from the orchestrator within ${timeoutMs} ms` };
    return { ok: false, error: `could not send the answer: ${(e as Error).message}` };
  }
  try {
    const parsed = AnswerReply.safeParse(JSON.parse(new TextDecoder().decode(data)));
    if (parsed.success) return parsed.data;
  } catch {
    /* fall through */
  }
  return { ok: false, error: 'the orchestrator sent a reply this client does not understand' };
}

function validPublicKey(key: string): boolean {
  try {
    fromPublic(key);
    return true;
  } catch {
    return false;
  }
}
