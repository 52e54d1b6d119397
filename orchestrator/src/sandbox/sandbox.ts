import type { KeyObject } from 'node:crypto';
import path from 'node:path';
import type Docker from 'dockerode';
import type { NatsConnection, Subscription } from 'nats';
import tar from 'tar-fs';
import {
  Cancel,
  decodeMessage,
  DEFAULT_OUTPUT_CAP,
  DEFAULT_TIMEOUT_MS,
  encodeMessage,
  Invocation,
  InvocationResult,
  MAX_OUTPUT_CAP,
  newId,
  OutputChunk,
  PROTOCOL_VERSION,
  signMessage,
  type ApprovalRef,
  type ChangedFile,
  type PrimitiveInput,
  type PrimitiveName,
  type SandboxSubjects,
} from '@gatehouse/shared';
import { runtimeApproval } from '../approval/runtime-approval';
import { ProtocolError, SandboxError, SandboxLostError } from './errors';
import { SANDBOX_UID, WORKSPACE } from './container';
import { shellQuote } from './shell-quote';
import { nodeStream } from './streams';
import type { SkippedPath } from './copy-list';

export interface InvokeOptions {
  /** Required: the daemon refuses anything without an approval bound to this exact action. */
  approval: ApprovalRef;
  invocationId?: string;
  intentId?: string;
  timeoutMs?: number;
  outputCap?: number;
  onOutput?: (chunk: OutputChunk) => void;
  signal?: AbortSignal;
}

export interface SandboxInfo {
  runId: string;
  sandboxId: string;
  containerId: string;
  networkId: string;
  /** Milliseconds spent in each start-up phase. */
  timings: Record<string, number>;
  /** Repository paths not copied in because the policy denies reading them. */
  withheld?: string[];
  /** How many repository paths were made read-only to commands because the policy denies writing them. */
  protectedPaths?: number;
  /** The repository's .git was left out (something was withheld); the sandbox has a fresh one. */
  freshRepository?: boolean;
  freshRepositoryReason?: string;
  /** Every workspace path the copy brought in (what setup adds is the rest). */
  copiedPaths?: ReadonlySet<string>;
  /** Other repository paths not copied in, and why (copy-in.ts CopyReport.skipped). */
  copySkipped?: SkippedPath[];
  /** What the copy has to tell the person running gatehouse (a link leading outside not copied…). */
  copyNotices?: string[];
}

/** How long past the invocation's own timeout we wait for the daemon's reply. */
const REPLY_GRACE_MS = 5_000;

/**
 * A running sandbox: invoke primitives over NATS, stream their output, cancel them, export what
 * changed, and learn promptly when the sandbox is lost (pending calls then fail with that reason).
 */
export class Sandbox {
  private lostError: SandboxLostError | undefined;
  private readonly lostListeners = new Set<(e: SandboxLostError) => void>();
  private destroyed = false;
  /** Set once the daemon said it is ready; until then start-up has its own timeout. */
  ready = false;
  lastHeartbeatAt = Date.now();

  constructor(
    readonly info: SandboxInfo,
    private readonly nc: NatsConnection,
    private readonly subjects: SandboxSubjects,
    /** For the archive API and `docker exec` around the daemon (workspace saves, exports). */
    readonly container: Docker.Container,
    private readonly teardown: () => Promise<void>,
    private readonly subscriptions: Subscription[],
    /**
     * The sandbox's invocation key, made when it was created and never written anywhere. Absent for
     * a sandbox adopted from a dead orchestrator: its key died with that process, so nothing can be
     * run in it any more (its files can still be copied out through Docker).
     */
    private readonly invocationKey?: KeyObject,
  ) {}

  get runId(): string {
    return this.info.runId;
  }
  get sandboxId(): string {
    return this.info.sandboxId;
  }
  get lost(): SandboxLostError | undefined {
    return this.lostError;
  }
  get isDestroyed(): boolean {
    return this.destroyed;
  }

  onLost(listener: (e: SandboxLostError) => void): () => void {
    if (this.lostError) listener(this.lostError);
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /** Called by the driver's watchdogs. Reported once; a destroyed sandbox is not "lost". */
  markLost(reason: string): void {
    if (this.lostError || this.destroyed) return;
    this.lostError = new SandboxLostError(this.sandboxId, reason);
    for (const l of this.lostListeners) l(this.lostError);
  }

  /**
   * Signs a message with this sandbox's invocation key, for callers that build raw messages (the
   * protocol tests). The key itself never leaves this object.
   */
  sign(message: object): string {
    if (!this.invocationKey) throw new SandboxError(`sandbox ${this.sandboxId} has no invocation key in this process`);
    return signMessage(message, this.invocationKey);
  }

  async invoke<P extends PrimitiveName>(
    primitive: P,
    input: PrimitiveInput<P>,
    opts: InvokeOptions,
  ): Promise<InvocationResult> {
    if (this.destroyed) throw new SandboxError(`sandbox ${this.sandboxId} was destroyed`);
    if (this.lostError) throw this.lostError;
    // A cancel sent before the invocation would reach a daemon with nothing to cancel.
    if (opts.signal?.aborted) throw new SandboxError(`invocation cancelled before it was sent`);
    const key = this.invocationKey;
    if (!key)
      throw new SandboxError(
        `sandbox ${this.sandboxId} was started by another orchestrator process; its invocation key died with it`,
      );
    const invocationId = opts.invocationId ?? newId('inv');
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const unsigned = {
      v: PROTOCOL_VERSION,
      invocationId,
      intentId: opts.intentId ?? invocationId,
      runId: this.runId,
      sandboxId: this.sandboxId,
      primitive,
      input,
      approval: opts.approval,
      timeoutMs,
      outputCap: opts.outputCap ?? DEFAULT_OUTPUT_CAP,
    };
    const payload = encodeMessage(Invocation, { ...unsigned, signature: signMessage(unsigned, key) } as Invocation);

    const outputSub = opts.onOutput ? this.subscribeOutput(invocationId, opts.onOutput) : undefined;
    const cancel = (): void => {
      const message = {
        v: PROTOCOL_VERSION,
        runId: this.runId,
        sandboxId: this.sandboxId,
        invocationId,
        reason: 'cancelled by the orchestrator',
      };
      this.nc.publish(
        this.subjects.cancel,
        encodeMessage(Cancel, { ...message, signature: signMessage(message, key) }),
      );
    };
    opts.signal?.addEventListener('abort', cancel, { once: true });
    let unsubscribeLost: (() => void) | undefined;
    const lost = new Promise<never>((_, reject) => {
      unsubscribeLost = this.onLost(reject);
    });
    try {
      const reply = await Promise.race([
        this.nc.request(this.subjects.invoke, payload, { timeout: timeoutMs + REPLY_GRACE_MS }),
        lost,
      ]);
      const decoded = decodeMessage(InvocationResult, reply.data);
      if (!decoded.ok) throw new ProtocolError(`sandbox ${this.sandboxId} sent an invalid result: ${decoded.error}`);
      return decoded.value;
    } catch (e) {
      if (e instanceof SandboxError) throw e;
      // Re-read: the check at the top narrowed this field, but the watchdog may have set it since.
      const lostError = this.lostError as SandboxLostError | undefined;
      if (lostError) throw lostError;
      const code = (e as { code?: string }).code;
      if (code === '503') throw new SandboxError(`sandbox ${this.sandboxId} has no daemon listening (no responders)`);
      if (code === 'TIMEOUT')
        throw new SandboxError(
          `sandbox ${this.sandboxId} did not answer invocation ${invocationId} within ${timeoutMs + REPLY_GRACE_MS} ms`,
        );
      throw e;
    } finally {
      unsubscribeLost?.();
      lost.catch(() => undefined);
      opts.signal?.removeEventListener('abort', cancel);
      outputSub?.unsubscribe();
    }
  }

  private subscribeOutput(invocationId: string, onOutput: (chunk: OutputChunk) => void): Subscription {
    return this.nc.subscribe(this.subjects.output(invocationId), {
      callback: (err, msg) => {
        if (err) return;
        const chunk = decodeMessage(OutputChunk, msg.data);
        if (chunk.ok && chunk.value.invocationId === invocationId) onOutput(chunk.value);
      },
    });
  }

  /** The workspace's changes since start-up, as a git diff applicable with `git apply`. */
  async changes(timeoutMs = 120_000): Promise<{ diff: string; files: ChangedFile[]; truncated: boolean }> {
    const result = await this.invoke(
      'changes',
      {},
      { approval: runtimeApproval('changes', {}, 'export-changes'), timeoutMs, outputCap: MAX_OUTPUT_CAP },
    );
    if (result.status !== 'ok' || result.data?.kind !== 'changes') {
      throw new SandboxError(`exporting changes failed: ${result.error?.message ?? result.status}`);
    }
    return { diff: result.output, files: result.data.files, truncated: result.truncated };
  }

  /** Copies workspace paths out through the Docker archive API (for content too big for NATS). */
  async exportFiles(paths: string[], destDir: string): Promise<void> {
    for (const p of paths) {
      const rel = path.posix.normalize(p);
      if (rel === '..' || rel.startsWith('../') || path.posix.isAbsolute(rel))
        throw new SandboxError(`refusing to export ${p}: not a workspace path`);
      const stream = await this.container.getArchive({ path: path.posix.join(WORKSPACE, rel) });
      const target = path.join(destDir, path.dirname(rel));
      await new Promise<void>((resolve, reject) => {
        const extract = tar.extract(target, { readable: true, writable: true });
        extract.on('finish', resolve);
        extract.on('error', reject);
        stream.on('error', reject);
        stream.pipe(extract);
      });
    }
  }

  /**
   * Puts files saved from an earlier sandbox of the same run back into the workspace (resume).
   * Through the Docker archive API, so binary files come back byte for byte.
   */
  async importFiles(srcDir: string, paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    const wanted = new Set(paths.map((p) => path.posix.normalize(p)));
    for (const p of wanted)
      if (p === '..' || p.startsWith('../') || path.posix.isAbsolute(p))
        throw new SandboxError(`refusing to import ${p}: not a workspace path`);
    const pack = tar.pack(srcDir, {
      entries: [...wanted],
      map: (header) => ({ ...header, uid: SANDBOX_UID, gid: SANDBOX_UID, uname: 'sandbox', gname: 'sandbox' }),
    });
    await this.container.putArchive(nodeStream(pack), { path: WORKSPACE });
  }

  /** Deletes workspace files (resume: files the run had deleted). Runs through the daemon like any command. */
  async removeFiles(paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    const command = `rm -f -- ${paths.map(shellQuote).join(' ')}`;
    const input = { command };
    const r = await this.invoke('exec', input, {
      approval: runtimeApproval('exec', input, 'restore-workspace'),
      timeoutMs: 60_000,
    });
    if (r.status !== 'ok' || r.exitCode !== 0)
      throw new SandboxError(`restoring deletions failed: ${r.error?.message ?? r.output}`);
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const s of this.subscriptions) s.unsubscribe();
    await this.teardown();
  }
}
