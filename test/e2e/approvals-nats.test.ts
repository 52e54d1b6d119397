import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from 'nats';
import { actionHash, approvalSubjects, newId } from '@gatehouse/shared';
import {
  answerOverNats,
  connectOrchestrator,
  ensureImages,
  ensureNatsServer,
  headlessChannel,
  natsChannel,
  newApproverKey,
  signAnswer,
  type ApprovalAnswer,
  type ApprovalChannel,
  type ApprovalPrompt,
  type SignedAnswer,
} from '@gatehouse/orchestrator';

/**
 * Approvals over a real NATS server (the one sandboxes use): what a web page or chat bot would
 * send, signed or not, and what the orchestrator's channel makes of it. Every wait is bounded.
 */

const alice = newApproverKey('alice');
const bob = newApproverKey('bob');
const mallory = newApproverKey('mallory'); // a valid key nobody listed
const APPROVERS = [alice, bob].map(({ name, publicKey }) => ({ name, publicKey }));

let orchestrator: NatsConnection;
let approver: NatsConnection; // a second connection, standing in for the page or bot

beforeAll(async () => {
  const images = await ensureImages();
  const endpoint = await ensureNatsServer(images.nats);
  orchestrator = await connectOrchestrator(endpoint.url, endpoint.identity);
  approver = await connectOrchestrator(endpoint.url, endpoint.identity);
});
afterAll(async () => {
  await orchestrator?.drain();
  await approver?.drain();
});

function promptFor(
  runId: string,
  requestId = newId('req'),
  input: unknown = { command: 'git push origin main' },
): ApprovalPrompt {
  return {
    runId,
    requestId,
    tool: 'bash',
    input,
    actionHash: actionHash({ name: 'bash', input }),
    rule: 'ask: bash(git push*)',
    reason: 'git push publishes commits',
    risk: ['network: git push'],
    preview: 'git push origin main',
    lineage: [runId],
  };
}

/** A fallback that records that it was asked, answering like a headless run would. */
function recordingFallback(): ApprovalChannel & { asked: string[] } {
  const headless = headlessChannel('pause');
  const asked: string[] = [];
  return { name: 'headless', asked, ask: (p, s) => (asked.push(p.requestId), headless.ask(p, s)) };
}

function setup(opts: { waitMs?: number } = {}) {
  const runId = newId('run');
  const rejected: { reason: string; raw: string }[] = [];
  const fallback = recordingFallback();
  const channel = natsChannel({
    nc: orchestrator,
    runId,
    approvers: APPROVERS,
    waitMs: opts.waitMs ?? 15_000,
    fallback,
    onRejected: (reason, raw) => rejected.push({ reason, raw }),
  });
  return { runId, channel, rejected, fallback };
}

function answerTo(
  p: ApprovalPrompt,
  over: Partial<Omit<SignedAnswer, 'signature' | 'signedAt'>> = {},
): Omit<SignedAnswer, 'signature' | 'signedAt'> {
  return {
    requestId: p.requestId,
    runId: p.runId,
    actionHash: p.actionHash,
    decision: 'grant',
    scope: 'run',
    approver: { name: alice.name, publicKey: alice.publicKey },
    ...over,
  };
}

/** Sends raw bytes to a request's answer subject and returns the parsed reply. */
async function sendRaw(p: ApprovalPrompt, body: string): Promise<{ ok: boolean; error?: string }> {
  const reply = await approver.request(approvalSubjects(p.runId).answer(p.requestId), new TextEncoder().encode(body), {
    timeout: 5_000,
  });
  return JSON.parse(new TextDecoder().decode(reply.data)) as { ok: boolean; error?: string };
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)),
  ]);
}

/** True if `p` settles within `ms` (used to prove that something did NOT settle). */
function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((r) => setTimeout(() => r(false), ms)),
  ]);
}

/**
 * Asks, and waits until the channel has published the request on `requests` (it subscribes to
 * answers before that), returning what was published and the pending answer.
 */
async function ask(
  channel: ApprovalChannel,
  p: ApprovalPrompt,
  signal = new AbortController().signal,
): Promise<{ seen: ApprovalPrompt; answer: Promise<ApprovalAnswer> }> {
  const sub = approver.subscribe(approvalSubjects(p.runId).requests);
  await approver.flush();
  const answer = channel.ask(p, signal);
  const iterate = (async () => {
    for await (const m of sub) {
      const seen = JSON.parse(new TextDecoder().decode(m.data)) as ApprovalPrompt;
      if (seen.requestId === p.requestId) return seen;
    }
    throw new Error('subscription ended');
  })();
  try {
    return { seen: await within(iterate, 5_000, `request ${p.requestId} published`), answer };
  } finally {
    sub.unsubscribe();
  }
}

describe('approvals over NATS', () => {
  it('accepts a signed grant from a listed approver and records who gave it', async () => {
    const { runId, channel, rejected, fallback } = setup();
    const p = promptFor(runId);
    const { seen, answer } = await ask(channel, p);
    // The approver works from what was published, as a page would.
    expect(seen).toMatchObject({
      requestId: p.requestId,
      actionHash: p.actionHash,
      tool: 'bash',
      preview: 'git push origin main',
      rule: 'ask: bash(git push*)',
    });

    const reply = await answerOverNats(
      approver,
      signAnswer(answerTo(seen, { scope: 'run', reason: 'release day' }), alice.seed),
      5_000,
    );
    expect(reply).toEqual({ ok: true, decision: 'grant' });
    expect(await within(answer, 5_000, 'ask settles')).toEqual({
      decision: 'grant',
      scope: 'run',
      approver: `nats:alice:${alice.publicKey}`,
      channel: 'nats',
      reason: 'release day',
    });
    expect(rejected).toEqual([]);
    expect(fallback.asked).toEqual([]);

    // Answered: a second answer finds nobody waiting.
    const again = await answerOverNats(approver, signAnswer(answerTo(seen), alice.seed), 5_000);
    expect(again).toMatchObject({ ok: false, error: expect.stringMatching(/not pending/) as unknown });
    await channel.close();
  });

  it('refuses every bad answer, keeps waiting, and then takes a valid deny with its reason', async () => {
    const { runId, channel, rejected, fallback } = setup();
    const p = promptFor(runId);
    const { answer } = await ask(channel, p);

    const good = signAnswer(answerTo(p), alice.seed);
    const { signature: _drop, ...unsigned } = good;
    const otherSig = signAnswer(answerTo(p, { decision: 'deny', reason: 'x' }), alice.seed).signature;
    const cases: { name: string; body: string; error: RegExp }[] = [
      { name: 'unsigned', body: JSON.stringify(unsigned), error: /invalid answer: signature/ },
      {
        name: 'signature of other content',
        body: JSON.stringify({ ...good, signature: otherSig }),
        error: /signature does not verify/,
      },
      {
        name: 'tampered after signing',
        body: JSON.stringify({ ...good, scope: 'once' }),
        error: /signature does not verify/,
      },
      {
        name: 'signature not base64',
        body: JSON.stringify({ ...good, signature: 'not base64!' }),
        error: /invalid answer: signature/,
      },
      {
        name: 'unknown key',
        body: JSON.stringify(
          signAnswer(answerTo(p, { approver: { name: 'mallory', publicKey: mallory.publicKey } }), mallory.seed),
        ),
        error: /not an approver of this run/,
      },
      {
        name: 'name/key mismatch',
        body: JSON.stringify(
          signAnswer(answerTo(p, { approver: { name: 'alice', publicKey: bob.publicKey } }), bob.seed),
        ),
        error: /does not match key .* listed as "bob"/,
      },
      {
        name: 'other action',
        body: JSON.stringify(
          signAnswer(answerTo(p, { actionHash: actionHash({ name: 'bash', input: { command: 'ls' } }) }), alice.seed),
        ),
        error: /actionHash does not match/,
      },
      {
        name: 'other request',
        body: JSON.stringify(signAnswer(answerTo(p, { requestId: 'req_other' }), alice.seed)),
        error: /for request req_other/,
      },
      {
        name: 'other run',
        body: JSON.stringify(signAnswer(answerTo(p, { runId: 'run_other' }), alice.seed)),
        error: /for run run_other/,
      },
      { name: 'unknown field', body: JSON.stringify({ ...good, admin: true }), error: /invalid answer/ },
      { name: 'malformed JSON', body: '{"requestId": ', error: /not JSON/ },
    ];
    for (const c of cases) {
      const reply = await sendRaw(p, c.body);
      expect(reply.ok, c.name).toBe(false);
      expect(reply.error, c.name).toMatch(c.error);
    }
    // Without a reply subject it is still refused and reported, just not answered.
    approver.publish(approvalSubjects(runId).answer(p.requestId), new TextEncoder().encode('garbage'));
    await approver.flush();

    await within(
      (async () => {
        while (rejected.length < cases.length + 1) await new Promise((r) => setTimeout(r, 10));
      })(),
      5_000,
      'every rejection reported',
    );
    cases.forEach((c, i) => expect(rejected[i]?.reason, c.name).toMatch(c.error));
    expect(rejected[cases.length]).toMatchObject({
      reason: expect.stringMatching(/not JSON/) as unknown,
      raw: 'garbage',
    });
    expect(await settlesWithin(answer, 100)).toBe(false);

    const deny = await answerOverNats(
      approver,
      signAnswer(answerTo(p, { decision: 'deny', scope: undefined, reason: 'not on a Friday' }), alice.seed),
      5_000,
    );
    expect(deny).toEqual({ ok: true, decision: 'deny' });
    expect(await within(answer, 5_000, 'ask settles')).toEqual({
      decision: 'deny',
      approver: `nats:alice:${alice.publicKey}`,
      channel: 'nats',
      reason: 'not on a Friday',
    });
    expect(fallback.asked).toEqual([]);
    await channel.close();
  });

  it('hands the request to the fallback after waitMs with no valid answer', async () => {
    const { runId, channel, rejected, fallback } = setup({ waitMs: 300 });
    const p = promptFor(runId);
    const started = Date.now();
    const { answer } = await ask(channel, p);
    // A refused answer does not count as an answer: the fallback is still asked.
    const forged = signAnswer(
      answerTo(p, { approver: { name: 'mallory', publicKey: mallory.publicKey } }),
      mallory.seed,
    );
    expect(await sendRaw(p, JSON.stringify(forged))).toMatchObject({ ok: false });
    const got = await within(answer, 5_000, 'fallback answers');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(got).toEqual({
      decision: 'pause',
      channel: 'headless',
      reason: 'no approver is attached (headless run); approve with `gatehouse approve`',
    });
    expect(fallback.asked).toEqual([p.requestId]);
    expect(rejected.length).toBe(1);
    // Too late: the request is no longer listening here.
    expect(await answerOverNats(approver, signAnswer(answerTo(p), alice.seed), 5_000)).toMatchObject({ ok: false });
    await channel.close();
  });

  it('lists the open requests on `pending`, and keeps concurrent requests independent', async () => {
    const { runId, channel, rejected } = setup();
    const p1 = promptFor(runId, 'req_one', { command: 'git push origin main' });
    const p2 = promptFor(runId, 'req_two', { command: 'npm publish' });
    const { answer: a1 } = await ask(channel, p1);
    const { answer: a2 } = await ask(channel, p2);

    const pending = async () => {
      const m = await approver.request(approvalSubjects(runId).pending, new Uint8Array(), { timeout: 5_000 });
      return JSON.parse(new TextDecoder().decode(m.data)) as { runId: string; pending: ApprovalPrompt[] };
    };
    const before = await pending();
    expect(before.runId).toBe(runId);
    expect(before.pending.map((x) => x.requestId)).toEqual(['req_one', 'req_two']);
    expect(before.pending[1]).toMatchObject({
      tool: 'bash',
      actionHash: p2.actionHash,
      input: { command: 'npm publish' },
    });

    // An answer to one request, sent to the other's subject, is refused there.
    expect(await sendRaw(p2, JSON.stringify(signAnswer(answerTo(p1), alice.seed)))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/for request req_one/) as unknown,
    });
    expect(await answerOverNats(approver, signAnswer(answerTo(p2, { scope: 'once' }), alice.seed), 5_000)).toEqual({
      ok: true,
      decision: 'grant',
    });
    expect(await within(a2, 5_000, 'second settles')).toMatchObject({ decision: 'grant', scope: 'once' });
    expect(await settlesWithin(a1, 100)).toBe(false);
    expect((await pending()).pending.map((x) => x.requestId)).toEqual(['req_one']);

    const bobsAnswer = signAnswer(answerTo(p1, { approver: { name: 'bob', publicKey: bob.publicKey } }), bob.seed);
    expect(await answerOverNats(approver, bobsAnswer, 5_000)).toEqual({ ok: true, decision: 'grant' });
    expect(await within(a1, 5_000, 'first settles')).toMatchObject({
      decision: 'grant',
      approver: `nats:bob:${bob.publicKey}`,
    });
    expect((await pending()).pending).toEqual([]);
    expect(rejected).toHaveLength(1);
    await channel.close();
  });

  it('settles at once when the run cancels the ask, and stops listing it', async () => {
    const { runId, channel, fallback } = setup();
    const p = promptFor(runId);
    const abort = new AbortController();
    const { answer } = await ask(channel, p, abort.signal);
    abort.abort();
    expect(await within(answer, 1_000, 'cancel settles')).toEqual({
      decision: 'pause',
      channel: 'nats',
      reason: 'cancelled',
    });
    const m = await approver.request(approvalSubjects(runId).pending, new Uint8Array(), { timeout: 5_000 });
    expect((JSON.parse(new TextDecoder().decode(m.data)) as { pending: unknown[] }).pending).toEqual([]);
    expect(fallback.asked).toEqual([]);
    await channel.close();
  });

  it('refuses to sign with a seed that is not the named approver key', () => {
    expect(() =>
      signAnswer(answerTo(promptFor('run_x'), { approver: { name: 'alice', publicKey: alice.publicKey } }), bob.seed),
    ).toThrow(/not for the approver key/);
  });
});
