import { readFileSync, writeFileSync } from 'node:fs';
import { connect, credsAuthenticator } from 'nats';
import { z } from 'zod';
import { approvalSubjects } from '@gatehouse/shared';
import { answerOverNats, newApproverKey, signAnswer } from '../approval/channels/approverKeys';
import { ensureImages, ensureNatsServer } from '../sandbox/index';
import { approverCreds } from '../sandbox/nats-auth';
import { ApprovalCommandError } from './approvals';

const KeyFile = z.strictObject({ name: z.string(), publicKey: z.string(), seed: z.string() });

/** `gatehouse approver keygen NAME --out FILE`: a signing key for approvals over NATS. */
export function approverKeygen(name: string, out: string): number {
  const key = newApproverKey(name);
  writeFileSync(out, `${JSON.stringify(key, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  process.stdout.write(`${JSON.stringify({ name: key.name, publicKey: key.publicKey })}\n`);
  process.stderr.write(`wrote the secret seed to ${out}; add the line above to "approvers" in the policy file\n`);
  return 0;
}

/** `gatehouse approver creds [--run RUN]`: NATS credentials that may only watch and answer approvals. */
export async function approverCredsCommand(o: { run?: string; out?: string }): Promise<number> {
  const nats = await ensureNatsServer((await ensureImages()).nats);
  const creds = await approverCreds(nats.identity, o.run);
  if (o.out) writeFileSync(o.out, creds, { mode: 0o600 });
  else process.stdout.write(creds);
  process.stderr.write(`NATS server: ${nats.url}\n`);
  return 0;
}

/**
 * `gatehouse approve RUN REQUEST --nats --key FILE`: answers a live run's request over NATS, as a
 * web page or chat bot would: list the pending requests, sign the answer, send it, print the verdict.
 */
export async function answerOverNatsCommand(
  runId: string,
  requestId: string,
  o: { key: string; decision: 'grant' | 'deny'; scope?: 'once' | 'run'; reason?: string },
): Promise<number> {
  let key: z.infer<typeof KeyFile>;
  try {
    key = KeyFile.parse(JSON.parse(readFileSync(o.key, 'utf8')));
  } catch (e) {
    throw new ApprovalCommandError(`cannot use approver key ${o.key}: ${(e as Error).message}`);
  }
  const nats = await ensureNatsServer((await ensureImages()).nats);
  const nc = await connect({
    servers: nats.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(await approverCreds(nats.identity, runId))),
  });
  try {
    const subjects = approvalSubjects(runId);
    let pending: Array<{ requestId: string; actionHash: string; tool: string; runId: string }>;
    try {
      const reply = await nc.request(subjects.pending, new Uint8Array(), { timeout: 5000 });
      pending = (JSON.parse(new TextDecoder().decode(reply.data)) as { pending: typeof pending }).pending;
    } catch {
      throw new ApprovalCommandError(
        `run ${runId} is not waiting for answers over NATS (not live, or its policy lists no approvers); for a ` +
          `paused run use: gatehouse approve ${runId} ${requestId}`,
      );
    }
    const request = pending.find((p) => p.requestId === requestId);
    if (!request)
      throw new ApprovalCommandError(
        `run ${runId} has no pending request ${requestId} (pending: ` +
          `${pending.map((p) => p.requestId).join(', ') || 'none'})`,
      );
    const signed = signAnswer(
      {
        requestId,
        runId: request.runId,
        actionHash: request.actionHash,
        decision: o.decision,
        ...(o.scope ? { scope: o.scope } : {}),
        ...(o.reason ? { reason: o.reason } : {}),
        approver: { name: key.name, publicKey: key.publicKey },
      },
      key.seed,
    );
    const verdict = await answerOverNats(nc, signed, 10_000, runId);
    process.stdout.write(`${JSON.stringify(verdict)}\n`);
    return verdict.ok ? 0 : 1;
  } finally {
    await nc.close();
  }
}
