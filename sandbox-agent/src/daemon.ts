import { connect, type Msg, type NatsConnection } from 'nats';
import {
  actionHash,
  Cancel,
  decodeMessage,
  encodeMessage,
  errorResult,
  Heartbeat,
  Invocation,
  InvocationResult,
  OutputChunk,
  PROTOCOL_VERSION,
  sandboxSubjects,
  validate,
  verifyMessage,
  type ErrorCode,
  type SandboxSubjects,
} from '@gatehouse/shared';
import { CallsInFlight } from './calls-in-flight';
import { Baseline } from './baseline';
import type { DaemonConfig } from './config';
import { PrimitiveError } from './errors';
import { Journal } from './journal';
import { McpSessions } from './mcp-sessions';
import { log } from './log';
import { credsAuthenticator } from './nats-creds';
import { bootClock } from './boot-clock';
import { runPrimitive, type Outcome } from './primitives/index';
import { startFreshRepository } from './fresh-repository';
import { applyProtection } from './protect';
import { sweepCommandUser } from './users';
import { Workspace } from './workspace';

export const AGENT_VERSION = '0.1.0';

export interface RunningDaemon {
  nc: NatsConnection;
  stop(): Promise<void>;
}

/**
 * The tool daemon: serves approved invocations for one run's sandbox. Every inbound message is
 * validated; anything wrong with it becomes a `rejected` result, never a crash.
 */
export async function startDaemon(cfg: DaemonConfig, loaded: { codeCache?: string } = {}): Promise<RunningDaemon> {
  // Connecting to NATS overlaps the copy-in: the workspace is complete when its protect list arrives.
  const connecting = connect({
    servers: cfg.natsUrl,
    name: `gatehouse-sandbox-${cfg.sandboxId}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    authenticator: credsAuthenticator(cfg.creds),
  });
  connecting.catch(() => undefined); // awaited below; a failure is reported there
  const boot = bootClock(cfg.boundAtMs);
  const connected = connecting.then(() => boot.mark('connected')).catch(() => undefined); // failures: below
  const shutdown = new AbortController();
  const ws = await Workspace.open(cfg.workspace);
  // The baseline's git directory is made while the repository is still arriving (it reads none of it).
  const baseline = new Baseline(ws.root, cfg.stateDir, cfg.user);
  baseline.init(shutdown.signal).catch(() => undefined); // awaited by record below
  const protect = await cfg.protect();
  boot.mark('workspaceComplete');
  // Before anything can run: what the policy denies writing becomes root's (protect.ts), and a
  // workspace whose .git was left out gets a fresh one (before protection: git must write freely).
  if (protect.freshRepository) await startFreshRepository(ws.root, cfg.user, shutdown.signal);
  const protection = applyProtection(ws.root, protect);
  boot.mark('protected');
  const subjects = sandboxSubjects(cfg.runId, cfg.sandboxId);
  const journal = new Journal();
  const inflight = new CallsInFlight();
  const startedAt = Date.now();

  // The baseline must exist before anything can change the workspace, so it is taken before ready.
  const baselineTree = baseline.record(shutdown.signal).then((t) => (boot.mark('baseline'), t));
  const [nc, tree] = await Promise.all([connecting, baselineTree, connected]);

  const handler = new InvocationHandler(cfg, ws, subjects, journal, inflight, nc, { baseline, tree });
  nc.subscribe(subjects.invoke, {
    callback: (err, msg) => {
      if (err) return log('error', 'invoke subscription error', { err: err.message });
      handler.handle(msg).catch((e: unknown) => log('error', 'invoke handler crashed', { err: String(e) }));
    },
  });
  nc.subscribe(subjects.cancel, {
    callback: (err, msg) => {
      if (err) return log('error', 'cancel subscription error', { err: err.message });
      const cancel = decodeMessage(Cancel, msg.data);
      if (!cancel.ok) return log('warn', 'bad cancel message', { error: cancel.error });
      if (!verifyMessage(cancel.value, cfg.invokeKey))
        return log('warn', 'cancel with a bad signature ignored', { invocationId: cancel.value.invocationId });
      const { runId, sandboxId, invocationId } = cancel.value;
      if (runId !== cfg.runId || sandboxId !== cfg.sandboxId)
        return log('warn', 'cancel for another sandbox', { runId, sandboxId });
      inflight.cancel(invocationId);
    },
  });

  const beat = (kind: 'ready' | 'heartbeat'): void => {
    nc.publish(
      kind === 'ready' ? subjects.ready : subjects.heartbeat,
      encodeMessage(Heartbeat, {
        v: PROTOCOL_VERSION,
        kind,
        runId: cfg.runId,
        sandboxId: cfg.sandboxId,
        agentVersion: AGENT_VERSION,
        pid: process.pid,
        uptimeMs: Date.now() - startedAt,
        inflight: inflight.size,
        rssBytes: process.memoryUsage.rss(),
        ts: new Date().toISOString(),
      }),
    );
  };
  beat('ready');
  const timer = setInterval(() => beat('heartbeat'), cfg.heartbeatMs);
  boot.mark('ready');
  const { runId, sandboxId } = cfg;
  log('info', 'ready', { runId, sandboxId, workspace: ws.root, protection, bootMs: boot.ms, ...loaded });

  return {
    nc,
    async stop() {
      clearInterval(timer);
      shutdown.abort();
      inflight.cancelAll();
      await nc.drain().catch(() => undefined);
    },
  };
}

class InvocationHandler {
  /** The end of the last sweep of command-user processes (see users.ts); every call waits for it. */
  private sweeping: Promise<void> = Promise.resolve();
  private sweepOwed = false;
  /**
   * Calls past the sweep and running. Not `inflight.size`: that also holds calls still waiting for
   * the sweep (tracked early so a cancel finds them), and counting those skipped the very sweep they
   * wait for, so a call started with the last command's processes still alive (smoke and red-team
   * suites, under load).
   */
  private running = 0;
  /** MCP servers running in this sandbox (primitives/mcp-session.ts). */
  private readonly sessions = new McpSessions();

  constructor(
    private readonly cfg: DaemonConfig,
    private readonly ws: Workspace,
    private readonly subjects: SandboxSubjects,
    private readonly journal: Journal,
    private readonly inflight: CallsInFlight,
    private readonly nc: NatsConnection,
    private readonly baseline: { baseline: Baseline; tree: string },
  ) {}

  async handle(msg: Msg): Promise<void> {
    const result = await this.resultFor(msg.data);
    let payload: Uint8Array;
    try {
      payload = encodeMessage(InvocationResult, result);
    } catch (e) {
      log('error', 'result failed its own schema', { err: String(e), invocationId: result.invocationId });
      payload = encodeMessage(InvocationResult, {
        ...this.refusal(result.invocationId, 'internal', 'the daemon produced an invalid result'),
        durationMs: result.durationMs,
      });
    }
    if (!msg.reply) return log('warn', 'invocation without a reply subject', { invocationId: result.invocationId });
    const max = this.nc.info?.max_payload ?? Number.POSITIVE_INFINITY;
    if (payload.length > max) {
      // JSON escaping can inflate capped output past the message limit: say so instead of going silent.
      log('warn', 'result too large for one message', {
        invocationId: result.invocationId,
        bytes: payload.length,
        max,
      });
      payload = encodeMessage(InvocationResult, {
        ...errorResult({
          invocationId: result.invocationId,
          runId: result.runId,
          sandboxId: result.sandboxId,
          status: 'failed',
          code: 'too_large',
          message:
            `the result was ${payload.length} bytes, over the ${max}-byte message limit; narrow the request ` +
            `(a smaller limit, offset or output)`,
        }),
        ...(result.primitive ? { primitive: result.primitive } : {}),
        durationMs: result.durationMs,
      });
    }
    try {
      msg.respond(payload);
    } catch (e) {
      log('error', 'could not send a result', { invocationId: result.invocationId, err: String(e) });
    }
  }

  private async resultFor(data: Uint8Array): Promise<InvocationResult> {
    const started = performance.now();
    let raw: unknown;
    try {
      raw = JSON.parse(new TextDecoder().decode(data));
    } catch {
      return this.refusal('unknown', 'invalid_message', 'message is not JSON');
    }
    const echoId =
      typeof raw === 'object' && raw !== null && typeof (raw as { invocationId?: unknown }).invocationId === 'string'
        ? String((raw as { invocationId: string }).invocationId).slice(0, 128) || 'unknown'
        : 'unknown';
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      return this.refusal(echoId, 'invalid_message', '(root): an invocation is a JSON object');
    }
    if ((raw as { approval?: unknown }).approval === undefined) {
      return this.refusal(
        echoId,
        'approval_missing',
        'invocation carries no approval reference; nothing runs without one',
        'approval',
      );
    }
    // Before anything else reads it: only the orchestrator that created this sandbox holds the key.
    if (!verifyMessage(raw, this.cfg.invokeKey)) {
      return this.refusal(
        echoId,
        'signature_invalid',
        "the invocation is not signed with this sandbox's invocation key; nothing runs without it",
        'signature',
      );
    }
    const parsed = validate(Invocation, raw);
    if (!parsed.ok) return this.refusal(echoId, 'invalid_message', parsed.error, parsed.path);
    const inv = parsed.value;
    if (inv.runId !== this.cfg.runId || inv.sandboxId !== this.cfg.sandboxId) {
      // Name the field that is wrong, as every other refusal of a bad message does.
      const field = inv.runId !== this.cfg.runId ? 'runId' : 'sandboxId';
      return this.refusal(
        inv.invocationId,
        'wrong_sandbox',
        `${field} is not this sandbox's: this daemon serves run ${this.cfg.runId} sandbox ${this.cfg.sandboxId}`,
        field,
      );
    }
    if (actionHash({ name: inv.primitive, input: inv.input }) !== inv.approval.actionHash) {
      return this.refusal(
        inv.invocationId,
        'approval_mismatch',
        'the approval was given for a different action',
        'approval.actionHash',
      );
    }

    const seen = this.journal.lookup(inv.invocationId);
    if (seen === 'expired') {
      return {
        ...this.refusal(
          inv.invocationId,
          'result_expired',
          'this invocation already ran; its result is no longer held',
        ),
        replayed: true,
      };
    }
    if (seen) return { ...(await seen), replayed: true };

    return this.journal.record(inv.invocationId, async () => {
      // Tracked before the first await, so a cancel that arrives meanwhile finds it (calls-in-flight.ts).
      const signal = this.inflight.start(inv.invocationId);
      await this.sweeping;
      this.running++;
      let seq = 0;
      let outcome: Outcome | PrimitiveError;
      try {
        // Cancelled before it began (calls-in-flight.ts): nothing runs, whatever the primitive.
        outcome = signal.aborted
          ? CANCELLED_BEFORE_START
          : await runPrimitive(inv, {
              ws: this.ws,
              baseline: this.baseline,
              signal,
              timeoutMs: inv.timeoutMs,
              outputCap: inv.outputCap,
              user: this.cfg.user,
              invocationId: inv.invocationId,
              sessions: this.sessions,
              onOutput: (stream, text) =>
                this.nc.publish(
                  this.subjects.output(inv.invocationId),
                  encodeMessage(OutputChunk, {
                    v: PROTOCOL_VERSION,
                    invocationId: inv.invocationId,
                    seq: seq++,
                    stream,
                    data: text,
                  }),
                ),
            });
      } catch (e) {
        outcome =
          e instanceof PrimitiveError ? e : new PrimitiveError('internal', `unexpected error: ${String(e)}`, 'failed');
        if (!(e instanceof PrimitiveError))
          log('error', 'primitive threw', { err: String(e), primitive: inv.primitive });
      } finally {
        this.inflight.end(inv.invocationId);
        this.running--;
        // Nothing of the command user may outlive its call. Off the reply's path; the next call
        // waits for it (sweeping), so no command-user process exists while the daemon works.
        // Owed after an exec, and paid once nothing is in flight: an exec that ends while another
        // call runs is swept when that call ends, not only after the next exec (red-team note).
        if (inv.primitive === 'exec' || inv.primitive === 'mcp_session') this.sweepOwed = true;
        if (this.sweepOwed) {
          // setImmediate: even the sweep's first, synchronous look (the pids counter, maybe /proc)
          // waits until the reply has gone out.
          this.sweeping = new Promise<void>((done) =>
            setImmediate(() => {
              if (this.running > 0) return done();
              this.sweepOwed = false;
              sweepCommandUser(this.cfg.user)
                .then(
                  (sweeps) =>
                    void (sweeps > 0 && log('info', 'ended command-user processes left after a call', { sweeps })),
                  (e: unknown) => log('error', 'sweeping command-user processes failed', { err: String(e) }),
                )
                .finally(done);
            }),
          );
        }
      }
      const durationMs = performance.now() - started;
      const ids = {
        v: PROTOCOL_VERSION,
        invocationId: inv.invocationId,
        runId: inv.runId,
        sandboxId: inv.sandboxId,
        primitive: inv.primitive,
        replayed: false,
      };
      if (outcome instanceof PrimitiveError) {
        const error = {
          code: outcome.code,
          message: outcome.message,
          ...(outcome.path === undefined ? {} : { path: outcome.path }),
        };
        return {
          ...ids,
          status: outcome.status,
          exitCode: null,
          signal: null,
          output: '',
          bytes: 0,
          truncated: false,
          durationMs,
          filesChanged: [],
          error,
        };
      }
      return {
        ...ids,
        status: outcome.status,
        exitCode: outcome.exitCode ?? null,
        signal: outcome.signal ?? null,
        output: outcome.output,
        bytes: outcome.bytes,
        truncated: outcome.truncated,
        durationMs,
        filesChanged: outcome.filesChanged ?? [],
        ...(outcome.data === undefined ? {} : { data: outcome.data }),
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
      };
    });
  }

  private refusal(invocationId: string, code: ErrorCode, message: string, path?: string): InvocationResult {
    return errorResult({
      invocationId,
      runId: this.cfg.runId,
      sandboxId: this.cfg.sandboxId,
      status: 'rejected',
      code,
      message,
      ...(path ? { path } : {}),
    });
  }
}

const CANCELLED_BEFORE_START: Outcome = {
  status: 'aborted',
  exitCode: null,
  signal: null,
  output: '',
  bytes: 0,
  truncated: false,
  error: { code: 'cancelled', message: 'cancelled before it started; nothing ran' },
};
