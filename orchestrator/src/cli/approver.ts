import { readFileSync, writeFileSync } from 'node:fs';
import { connect, credsAuthenticator } from 'nats';
import { z } from 'zod';
import { approvalSubjects, type PlanChanges, type RecoveryChoice } from '@gatehouse/shared';
import { LATEST, resolveRun, RunNotFoundError } from '../events/run-ref';
import { answerOverNats, newApproverKey, signAnswer } from '../approval/channels/approverKeys';
import { ensureImages, ensureNatsServer } from '../sandbox/index';
import { approverCreds } from '../sandbox/nats-auth';
import { ApprovalCommandError } from './approvals';

const KeyFile = z.strictObject({ name: z.string(), publicKey: z.string(), seed: z.string() });

type Pending = { requestId: string; actionHash: string; tool: string; runId: string };

/**
 * The run an answer over NATS goes to: resolved like every run id where its log is here; a live
 * run on another machine has no log here, and its id is taken as given.
 */
export function natsRunId(ref: string, stateDir: string | undefined): string {
  try {
    return resolveRun(ref, { stateDir }).runId;
  } catch (e) {
    if (e instanceof RunNotFoundError && ref !== LATEST) return ref;
    throw e;
  }
}

function pickRequest(runId: string, pending: Pending[], which: string | { tool: string }): Pending {
  const listed = `pending: ${pending.map((p) => `${p.requestId} ${p.tool}`).join(', ') || 'none'}`;
  if (typeof which === 'string') {
    const request = pending.find((p) => p.requestId === which);
    if (!request) throw new ApprovalCommandError(`run ${runId} has no pending request ${which} (${listed})`);
    return request;
  }
  const matching = pending.filter((p) => p.tool === which.tool);
  if (matching.length === 1) return matching[0]!;
  throw new ApprovalCommandError(
    matching.length === 0
      ? `run ${runId} has no pending ${which.tool} request (${listed})`
      : `run ${runId} has ${matching.length} pending ${which.tool} requests (${listed}); answer one by its id`,
  );
}

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
  /** The request, or (plan approve|reject|ask) the one pending request of this tool. */
  which: string | { tool: string },
  o: {
    key: string;
    decision: 'grant' | 'deny';
    scope?: 'once' | 'run';
    reason?: string;
    /** Plan mode: signed with the rest, so they cannot be altered on the way. */
    plan?: { changes?: PlanChanges; choice?: RecoveryChoice; clarify?: true };
  },
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
    let pending: Pending[];
    try {
      const reply = await nc.request(subjects.pending, new Uint8Array(), { timeout: 5000 });
      pending = (JSON.parse(new TextDecoder().decode(reply.data)) as { pending: typeof pending }).pending;
    } catch {
      const paused = typeof which === 'string' ? `use: gatehouse approve ${runId} ${which}` : 'answer without --nats';
      throw new ApprovalCommandError(
        `run ${runId} is not waiting for answers over NATS (not live, or its policy lists no approvers); for a ` +
          `paused run ${paused}`,
      );
    }
    const request = pickRequest(runId, pending, which);
    const signed = signAnswer(
      {
        requestId: request.requestId,
        runId: request.runId,
        actionHash: request.actionHash,
        decision: o.decision,
        ...(o.scope ? { scope: o.scope } : {}),
        ...(o.reason ? { reason: o.reason } : {}),
        ...(o.plan?.changes ? { changes: o.plan.changes } : {}),
        ...(o.plan?.choice ? { choice: o.plan.choice } : {}),
        ...(o.plan?.clarify ? { clarify: true as const } : {}),
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
