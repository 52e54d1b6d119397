import type { Msg, NatsConnection, Subscription } from 'nats';
import { z } from 'zod';
import { approvalSubjects, Id, validate } from '@gatehouse/shared';
import { Approver, SignedAnswer, verifyAnswerSignature, type AnswerReply } from './approverKeys';
import type { ApprovalAnswer, ApprovalChannel, ApprovalPrompt } from './types';
import { checkPlanAnswer, type Answered } from '../plan-answer';

export interface NatsChannelOptions {
  nc: NatsConnection;
  runId: string;
  /** The only keys whose signed answers count; a name must match its key. */
  approvers: { name: string; publicKey: string }[];
  /** How long to wait for a valid answer before handing the request to `fallback`. */
  waitMs: number;
  /** Asked when no valid answer came in time (a terminal, or headless pause): the channel never hangs. */
  fallback: ApprovalChannel;
  /** Every answer that was refused, with why; the raw payload is cut to 4,000 characters. */
  onRejected?: (reason: string, raw: string) => void;
  /** NATS itself failed (publish, subscribe); the request went to the fallback at once. */
  onError?: (message: string) => void;
}

/**
 * Approvals over NATS, so a web page or a chat bot can answer. The request is published for
 * anyone watching; an answer counts only if it is signed by a listed approver key and names this
 * exact request and action. A refused answer is reported and replied to, and the request keeps
 * waiting: a forged or garbled answer can delay nothing but itself.
 */
export function natsChannel(opts: NatsChannelOptions): ApprovalChannel & { close(): Promise<void> } {
  return new NatsChannel(opts);
}

const MAX_RAW_REPORTED = 4_000;
const MAX_PREVIEW_WHEN_OMITTED = 64 * 1024;
/** Room left in a message for the envelope around a prompt. */
const PAYLOAD_MARGIN = 4 * 1024;

type Outcome = ApprovalAnswer | 'fallback';
type Check = { ok: true; answer: ApprovalAnswer } | { ok: false; error: string };

class NatsChannel implements ApprovalChannel {
  readonly name = 'nats' as const;
  private readonly nc: NatsConnection;
  private readonly runId: string;
  private readonly subjects: ReturnType<typeof approvalSubjects>;
  private readonly approvers = new Map<string, string>(); // publicKey -> name
  private readonly waitMs: number;
  private readonly fallback: ApprovalChannel;
  private readonly onRejected: (reason: string, raw: string) => void;
  private readonly onError: (message: string) => void;
  /** Requests waiting for an answer here (not yet handed to the fallback), oldest first. */
  private readonly open = new Map<string, { prompt: ApprovalPrompt; stop: () => void }>();
  private readonly pendingSub: Subscription;
  private closed = false;

  constructor(opts: NatsChannelOptions) {
    this.nc = opts.nc;
    this.runId = Id.parse(opts.runId);
    this.subjects = approvalSubjects(this.runId);
    for (const a of z.array(Approver).parse(opts.approvers)) {
      const known = this.approvers.get(a.publicKey);
      if (known !== undefined && known !== a.name)
        throw new Error(`approver key ${a.publicKey} is listed twice, as "${known}" and "${a.name}"`);
      this.approvers.set(a.publicKey, a.name);
    }
    this.waitMs = z.number().finite().nonnegative().parse(opts.waitMs);
    this.fallback = opts.fallback;
    this.onRejected = guarded(opts.onRejected);
    this.onError = guarded(opts.onError);
    this.pendingSub = this.nc.subscribe(this.subjects.pending, {
      callback: (err, msg) => {
        if (!err) respond(msg, this.pendingList());
      },
    });
  }

  async ask(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalAnswer> {
    // One channel per tree of agents: a sub-agent's request goes out on its root run's subjects
    // (its lineage starts there); answers are checked against the prompt's own run.
    if (prompt.runId !== this.runId && !prompt.lineage.includes(this.runId))
      throw new Error(`this NATS approval channel serves run ${this.runId} and its sub-agents, not ${prompt.runId}`);
    if (this.open.has(prompt.requestId))
      throw new Error(`request ${prompt.requestId} is already waiting for an answer`);
    if (signal.aborted) return cancelled();
    const outcome = this.closed ? 'fallback' : await this.waitForAnswer(prompt, signal);
    return outcome === 'fallback' ? this.fallback.ask(prompt, signal) : outcome;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    unsubscribe(this.pendingSub);
    // Anyone still waiting here goes to the fallback rather than hanging on a closed channel.
    for (const { stop } of [...this.open.values()]) stop();
  }

  private waitForAnswer(prompt: ApprovalPrompt, signal: AbortSignal): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      let settled = false;
      let sub: Subscription | undefined;
      let timer: NodeJS.Timeout | undefined;
      const finish = (outcome: Outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (sub) unsubscribe(sub);
        this.open.delete(prompt.requestId);
        resolve(outcome);
      };
      const onAbort = () => finish(cancelled());
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        // Subscribe before publishing: an approver answering at once must find someone listening.
        sub = this.nc.subscribe(this.subjects.answer(prompt.requestId), {
          callback: (err, msg) => {
            if (err || settled) return;
            const verdict = this.check(prompt, msg.data);
            if (!verdict.ok) {
              this.onRejected(verdict.error, cutRaw(msg.data));
              respond(msg, { ok: false, error: verdict.error } satisfies AnswerReply);
              return; // keep waiting: a bad answer is not an answer
            }
            respond(msg, {
              ok: true,
              decision: verdict.answer.decision === 'grant' ? 'grant' : 'deny',
            } satisfies AnswerReply);
            finish(verdict.answer);
          },
        });
        this.open.set(prompt.requestId, { prompt, stop: () => finish('fallback') });
        timer = setTimeout(() => finish('fallback'), this.waitMs);
        this.nc.publish(this.subjects.requests, this.encodeJson(wirePrompt(prompt, this.maxPayload())));
      } catch (e) {
        this.onError(
          `approval request ${prompt.requestId} could not go out over NATS (${(e as Error).message}); asking the ` +
            `${this.fallback.name} channel instead`,
        );
        finish('fallback');
      }
    });
  }

  /** Every condition must hold; the first that fails is the reason given back. */
  private check(prompt: ApprovalPrompt, data: Uint8Array): Check {
    let raw: unknown;
    try {
      raw = JSON.parse(new TextDecoder().decode(data));
    } catch (e) {
      return { ok: false, error: `not JSON: ${(e as Error).message}` };
    }
    const parsed = validate(SignedAnswer, raw);
    if (!parsed.ok) return { ok: false, error: `invalid answer: ${parsed.error}` };
    const a = parsed.value;
    if (a.runId !== prompt.runId)
      return { ok: false, error: `the answer is for run ${a.runId}, this request belongs to run ${prompt.runId}` };
    if (a.requestId !== prompt.requestId)
      return { ok: false, error: `the answer is for request ${a.requestId}, not ${prompt.requestId}` };
    if (a.actionHash !== prompt.actionHash)
      return {
        ok: false,
        error:
          `the answer's actionHash does not match request ${prompt.requestId}'s action (answer the action as ` +
          `published)`,
      };
    const listed = this.approvers.get(a.approver.publicKey);
    if (listed === undefined)
      return { ok: false, error: `approver key ${a.approver.publicKey} is not an approver of this run` };
    if (listed !== a.approver.name)
      return {
        ok: false,
        error:
          `approver name "${a.approver.name}" does not match key ${a.approver.publicKey}, which is listed as ` +
          `"${listed}"`,
      };
    if (!verifyAnswerSignature(a))
      return { ok: false, error: `the signature does not verify for key ${a.approver.publicKey}` };
    const approver = `nats:${a.approver.name}:${a.approver.publicKey}`;
    const answer: Answered =
      a.decision === 'grant'
        ? {
            // A grant that does not name a scope gets the narrower one.
            decision: 'grant',
            scope: a.scope ?? 'once',
            approver,
            channel: 'nats',
            ...(a.reason ? { reason: a.reason } : {}),
            ...(a.changes ? { changes: a.changes } : {}),
            ...(a.choice ? { choice: a.choice } : {}),
          }
        : {
            decision: 'deny',
            approver,
            channel: 'nats',
            reason: a.reason?.trim() || `denied by ${a.approver.name}`,
            ...(a.clarify ? { clarify: true } : {}),
          };
    // Signed or not, a plan's changes that break it (or a choice for a plain call) answer nothing.
    const fits = checkPlanAnswer(prompt.tool, prompt.input, answer);
    if (!fits.ok) return { ok: false, error: `the answer does not fit request ${prompt.requestId}: ${fits.problem}` };
    return { ok: true, answer: fits.answer };
  }

  private pendingList(): { runId: string; pending: unknown[]; truncated?: true } {
    const max = this.maxPayload() - PAYLOAD_MARGIN;
    const pending: unknown[] = [];
    let size = 0;
    for (const { prompt } of this.open.values()) {
      const wire = wirePrompt(prompt, Math.floor(max / Math.max(1, this.open.size)));
      const bytes = Buffer.byteLength(JSON.stringify(wire));
      if (size + bytes > max) return { runId: this.runId, pending, truncated: true };
      size += bytes;
      pending.push(wire);
    }
    return { runId: this.runId, pending };
  }

  private maxPayload(): number {
    return this.nc.info?.max_payload ?? 1024 * 1024;
  }

  private encodeJson(value: unknown): Uint8Array {
    return new TextEncoder().encode(JSON.stringify(value));
  }
}

/**
 * The prompt as published. An input too big for one message (a large write_file) is left out:
 * the preview shows it to a person, and the approval is bound to the action hash either way.
 */
function wirePrompt(prompt: ApprovalPrompt, maxBytes: number): ApprovalPrompt & { inputOmitted?: true } {
  if (Buffer.byteLength(JSON.stringify(prompt)) <= maxBytes - PAYLOAD_MARGIN) return prompt;
  const preview =
    prompt.preview.length > MAX_PREVIEW_WHEN_OMITTED
      ? `${prompt.preview.slice(0, MAX_PREVIEW_WHEN_OMITTED)}… (cut)`
      : prompt.preview;
  return { ...prompt, input: null, preview, inputOmitted: true };
}

function cancelled(): ApprovalAnswer {
  return { decision: 'pause', channel: 'nats', reason: 'cancelled' };
}

function respond(msg: Msg, body: unknown): void {
  if (!msg.reply) return;
  try {
    msg.respond(new TextEncoder().encode(JSON.stringify(body)));
  } catch {
    /* the connection is closing; the asker times out on its own */
  }
}

function unsubscribe(sub: Subscription): void {
  try {
    sub.unsubscribe();
  } catch {
    /* already closed with the connection */
  }
}

function cutRaw(data: Uint8Array): string {
  const raw = new TextDecoder().decode(data);
  return raw.length <= MAX_RAW_REPORTED
    ? raw
    : `${raw.slice(0, MAX_RAW_REPORTED)}… (${raw.length - MAX_RAW_REPORTED} more chars)`;
}

/** A throwing logger must not break the channel. */
function guarded<A extends unknown[]>(f: ((...args: A) => void) | undefined): (...args: A) => void {
  return (...args: A) => {
    try {
      f?.(...args);
    } catch {
      /* the callback's problem, not the approval's */
    }
  };
}
