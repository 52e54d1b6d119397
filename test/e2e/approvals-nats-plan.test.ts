import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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
  previewOf,
  signAnswer,
  type ApprovalAnswer,
  type ApprovalPrompt,
  type SignedAnswer,
} from '@gatehouse/orchestrator';

/**
 * Plan mode's answers over a real NATS server: a plan approved with changes or answered with a
 * question, an escalation answered with retry/skip/abort. Each is signed like every answer, and the
 * signature covers the changes, the choice and the question mark, so none can be altered in transit.
 */

const alice = newApproverKey('alice');
let orchestrator: NatsConnection;
let approver: NatsConnection;

beforeAll(async () => {
  const endpoint = await ensureNatsServer((await ensureImages({ prune: false })).nats);
  orchestrator = await connectOrchestrator(endpoint.url, endpoint.identity);
  approver = await connectOrchestrator(endpoint.url, endpoint.identity);
});
afterAll(async () => {
  await orchestrator?.drain();
  await approver?.drain();
});

const PLAN = {
  tasks: [
    { id: 't1', title: 'Add a failing test for add()', dependsOn: [] },
    { id: 't2', title: 'Fix add() in src/math.js', dependsOn: ['t1'] },
    { id: 't3', title: 'Document add() in README.md', dependsOn: [] },
  ],
};
const ESCALATION = {
  taskId: 't2',
  title: 'Fix add() in src/math.js',
  failureClass: 'unknown',
  reason: 'the check exited 1 twice',
  choices: ['retry', 'skip', 'abort'],
};

function promptFor(runId: string, tool: string, input: unknown): ApprovalPrompt {
  return {
    runId,
    requestId: newId('apr'),
    tool,
    input,
    actionHash: actionHash({ name: tool, input }),
    rule: `ask: ${tool}`,
    reason: 'plan mode asks a person',
    risk: [],
    preview: previewOf(tool, input),
    lineage: [runId],
  };
}

function setup() {
  const runId = newId('run');
  const rejected: string[] = [];
  const channel = natsChannel({
    nc: orchestrator,
    runId,
    approvers: [{ name: alice.name, publicKey: alice.publicKey }],
    waitMs: 15_000,
    fallback: headlessChannel('pause'),
    onRejected: (reason) => rejected.push(reason),
  });
  return { runId, channel, rejected };
}

type Unsigned = Omit<SignedAnswer, 'signature' | 'signedAt'>;
const answerTo = (p: ApprovalPrompt, over: Partial<Unsigned>): Unsigned => ({
  requestId: p.requestId,
  runId: p.runId,
  actionHash: p.actionHash,
  decision: 'grant',
  approver: { name: alice.name, publicKey: alice.publicKey },
  ...over,
});

async function sendRaw(p: ApprovalPrompt, body: unknown): Promise<{ ok: boolean; error?: string }> {
  const reply = await approver.request(
    approvalSubjects(p.runId).answer(p.requestId),
    new TextEncoder().encode(JSON.stringify(body)),
    { timeout: 5_000 },
  );
  return JSON.parse(new TextDecoder().decode(reply.data)) as { ok: boolean; error?: string };
}

/** Asks, and resolves once the request is out on NATS (the channel listens for answers by then). */
async function ask(
  channel: ReturnType<typeof natsChannel>,
  p: ApprovalPrompt,
): Promise<{ seen: ApprovalPrompt; answer: Promise<ApprovalAnswer> }> {
  const sub = approver.subscribe(approvalSubjects(p.runId).requests, { max: 1 });
  await approver.flush();
  const answer = channel.ask(p, new AbortController().signal);
  const timer = setTimeout(() => sub.unsubscribe(), 5_000);
  for await (const m of sub) {
    clearTimeout(timer);
    return { seen: JSON.parse(new TextDecoder().decode(m.data)) as ApprovalPrompt, answer };
  }
  throw new Error(`request ${p.requestId} was not published within 5 s`);
}

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<never>((_, no) => setTimeout(() => no(new Error(`not within ${ms} ms`)), ms))]);
}

describe('plan mode answers over NATS', () => {
  it('a plan with changes: tampered changes and changes breaking the plan are refused; signed ones count', async () => {
    const { runId, channel, rejected } = setup();
    const p = promptFor(runId, 'submit_plan', PLAN);
    const { seen, answer } = await ask(channel, p);
    expect(seen.preview).toContain(' 2. t2  Fix add() in src/math.js');

    const signed = signAnswer(answerTo(p, { changes: { skip: ['t3'] } }), alice.seed);
    // Altered in transit: skip another task, drop the changes, or add some to a plain grant.
    const tampered = [
      { ...signed, changes: { skip: ['t1'] } },
      (({ changes: _c, ...rest }) => rest)(signed),
      { ...signAnswer(answerTo(p, {}), alice.seed), changes: { skip: ['t3'] } },
    ];
    for (const body of tampered) {
      expect(await sendRaw(p, body)).toMatchObject({
        ok: false,
        error: expect.stringMatching(/signature does not verify/) as unknown,
      });
    }
    // Signed, but the reorder puts t2 before the t1 it depends on.
    const breaking = signAnswer(answerTo(p, { changes: { order: ['t2', 't1', 't3'] } }), alice.seed);
    expect(await sendRaw(p, breaking)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/does not fit request .*the changes were refused: .*t2/) as unknown,
    });
    expect(rejected).toHaveLength(4);

    expect(await answerOverNats(approver, signed, 5_000)).toEqual({ ok: true, decision: 'grant' });
    expect(await within(answer, 5_000)).toEqual({
      decision: 'grant',
      scope: 'once',
      approver: `nats:alice:${alice.publicKey}`,
      channel: 'nats',
      changes: { skip: ['t3'] },
    });
    await channel.close();
  });

  it('a question about a plan: the clarify mark is signed; a choice does not answer a plan', async () => {
    const { runId, channel } = setup();
    const p = promptFor(runId, 'submit_plan', PLAN);
    const { answer } = await ask(channel, p);
    const question = signAnswer(
      answerTo(p, { decision: 'deny', reason: 'Why does t3 not wait for t2?', clarify: true }),
      alice.seed,
    );
    // Turning the question into a rejection (or back) breaks the signature.
    const { clarify: _c, ...asRejection } = question;
    expect(await sendRaw(p, asRejection)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/signature/) as unknown,
    });
    expect(await sendRaw(p, signAnswer(answerTo(p, { choice: 'retry' }), alice.seed))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/a choice \(retry, skip, abort\) answers an escalation, not submit_plan/) as unknown,
    });
    expect(await answerOverNats(approver, question, 5_000)).toEqual({ ok: true, decision: 'deny' });
    expect(await within(answer, 5_000)).toEqual({
      decision: 'deny',
      approver: `nats:alice:${alice.publicKey}`,
      channel: 'nats',
      reason: 'Why does t3 not wait for t2?',
      clarify: true,
    });
    await channel.close();
  });

  it('an escalation: a grant needs a choice, a tampered choice is refused, a signed one counts', async () => {
    const { runId, channel } = setup();
    const p = promptFor(runId, 'escalation', ESCALATION);
    const { seen, answer } = await ask(channel, p);
    expect(seen.preview).toContain('failure:  unknown');
    expect(await sendRaw(p, signAnswer(answerTo(p, {}), alice.seed))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/answered with a choice: retry, skip or abort/) as unknown,
    });
    const skip = signAnswer(answerTo(p, { choice: 'skip' }), alice.seed);
    expect(await sendRaw(p, { ...skip, choice: 'retry' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/signature does not verify/) as unknown,
    });
    expect(await answerOverNats(approver, skip, 5_000)).toEqual({ ok: true, decision: 'grant' });
    expect(await within(answer, 5_000)).toMatchObject({ decision: 'grant', choice: 'skip', channel: 'nats' });
    await channel.close();
  });

  it('gatehouse plan approve|ask|decide --nats --key: signed answers from the CLI reach the live run', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'gh-plan-nats-'));
    const keyFile = path.join(tmp, 'alice.key.json');
    writeFileSync(keyFile, JSON.stringify(alice), { mode: 0o600 });
    const at = ['--state-dir', path.join(tmp, 'state'), '--nats', '--key', keyFile];

    const { runId, channel } = setup();
    const plan = promptFor(runId, 'submit_plan', PLAN);
    const planAnswer = (await ask(channel, plan)).answer;
    // A reorder that breaks the plan is refused by the run, and the request keeps waiting.
    const broken = await gatehouseAsync(['plan', 'approve', runId, '--order', 't2,t1,t3', ...at]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/"ok":false.*the changes were refused/);
    const approved = await gatehouseAsync(['plan', 'approve', runId, '--skip', 't3', ...at]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(await within(planAnswer, 5_000)).toMatchObject({ decision: 'grant', changes: { skip: ['t3'] } });

    const second = promptFor(runId, 'submit_plan', PLAN);
    const secondAnswer = (await ask(channel, second)).answer;
    const asked = await gatehouseAsync(['plan', 'ask', runId, '--question', 'Why t3 at all?', ...at]);
    expect(asked.code, asked.stderr).toBe(0);
    expect(await within(secondAnswer, 5_000)).toMatchObject({
      decision: 'deny',
      reason: 'Why t3 at all?',
      clarify: true,
    });

    const esc = promptFor(runId, 'escalation', ESCALATION);
    const escAnswer = (await ask(channel, esc)).answer;
    const decided = await gatehouseAsync(['plan', 'decide', runId, esc.requestId, 'abort', ...at]);
    expect(decided.code, decided.stderr).toBe(0);
    expect(await within(escAnswer, 5_000)).toMatchObject({ decision: 'grant', choice: 'abort', channel: 'nats' });
    await channel.close();
  });
});

const cli = path.join(fileURLToPath(new URL('../..', import.meta.url)), 'orchestrator/bin/gatehouse.mjs');

/** The CLI in a child process, without blocking this one (the channel answering it lives here). */
function gatehouseAsync(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cli, ...args], {
    env: { ...process.env, CI: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    }),
  );
}
