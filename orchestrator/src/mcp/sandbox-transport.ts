import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import {
  actionHash,
  MCP_MAX_MESSAGE_BYTES,
  newId,
  type InvocationResult,
  type OutputChunk,
  type PrimitiveInput,
} from '@gatehouse/shared';
import type { SandboxPort } from '../tools/ports';
import { loadSdk, type Sdk } from './sdk';

/**
 * Messages gatehouse sends one session at most. A session is a start, one request and its answer,
 * and a few answers to the server's own requests (a ping, a "method not found"): each answer is a
 * signed invocation to the daemon, so a server sending requests by the thousand (a 16 MiB session
 * holds some 200,000) would otherwise have gatehouse sign and relay as many, all at once.
 */
const MAX_SENDS = 256;

/** What authorises a session: the approval of the call it serves (or the runtime's own, for listing). */
export interface SessionApproval {
  id: string;
  by: 'policy' | 'user' | 'runtime';
}

export interface SandboxTransportOptions {
  sandbox: SandboxPort;
  server: PrimitiveInput<'mcp_session'>;
  approval: SessionApproval;
  /** The session's whole life: the daemon stops the server at this limit whatever happens. */
  timeoutMs: number;
  /** How long the server may take to start before start() gives up. */
  startTimeoutMs?: number;
}

/** The end of a session as the daemon reported it (or why none came back). */
export type SessionEnd = { result: InvocationResult } | { error: Error };

/**
 * The MCP SDK's Transport over the sandbox daemon (docs/mcp.md): the server runs inside the sandbox
 * as the command user (`mcp_session`), each message to it is a signed `mcp_send` invocation, and its
 * stdout comes back as the session's output chunks, reassembled into lines here. A chunk lost on
 * the way (core NATS may drop one) shows as a gap in the sequence and ends the session with an
 * error rather than a reply that never comes. The daemon's first chunk (empty, on stderr) says the
 * server was started.
 */
export class SandboxStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private readonly sessionInvocation = newId('inv');
  private readonly stop = new AbortController();
  private buffer = '';
  private nextSeq = 0;
  private sent = 0;
  private closed = false;
  private started?: () => void;
  private failedToStart?: (e: Error) => void;
  private session?: Promise<SessionEnd>;
  private schema?: Sdk['JSONRPCMessageSchema'];
  /** How the session ended, once it has. */
  end?: SessionEnd;

  constructor(private readonly o: SandboxTransportOptions) {}

  async start(): Promise<void> {
    this.schema = (await loadSdk()).JSONRPCMessageSchema;
    const input = this.o.server;
    const ready = new Promise<void>((resolve, reject) => {
      this.started = resolve;
      this.failedToStart = reject;
    });
    this.session = this.o.sandbox
      .invoke('mcp_session', input, {
        approval: { ...this.o.approval, actionHash: actionHash({ name: 'mcp_session', input }) },
        invocationId: this.sessionInvocation,
        timeoutMs: this.o.timeoutMs,
        outputCap: 64 * 1024,
        onOutput: (c) => this.take(c),
        signal: this.stop.signal,
      })
      .then(
        (result): SessionEnd => ({ result }),
        (error: Error): SessionEnd => ({ error }),
      );
    void this.session.then((end) => this.ended(end));
    const limit = this.o.startTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the server did not start within ${limit} ms`)), limit);
    });
    try {
      await Promise.race([ready, late]);
    } catch (e) {
      await this.close();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error('the MCP session has ended');
    if (++this.sent > MAX_SENDS) {
      const e = new Error(
        `the server made gatehouse send it over ${MAX_SENDS} messages in one session (a flood of requests)`,
      );
      this.fail(e);
      throw e;
    }
    const line = JSON.stringify(message);
    if (Buffer.byteLength(line) > MCP_MAX_MESSAGE_BYTES)
      throw new Error(`a message to the server is over ${MCP_MAX_MESSAGE_BYTES} bytes`);
    const input = { session: this.sessionInvocation, line };
    const r = await this.o.sandbox.invoke('mcp_send', input, {
      approval: { ...this.o.approval, actionHash: actionHash({ name: 'mcp_send', input }) },
      timeoutMs: 15_000,
      outputCap: 1024,
    });
    if (r.status !== 'ok') throw new Error(`the server could not be sent a message: ${r.error?.message ?? r.status}`);
  }

  async close(): Promise<void> {
    this.stop.abort();
    // The daemon answers a cancelled session at once (the server's group is killed); bounded all the same.
    if (this.session) await Promise.race([this.session, new Promise((r) => setTimeout(r, 5_000))]);
    this.ended(this.end ?? { error: new Error('closed') });
  }

  private take(chunk: OutputChunk): void {
    if (this.closed) return;
    if (chunk.seq !== this.nextSeq) {
      this.fail(new Error(`output from the server was lost in transit (chunk ${this.nextSeq} never came)`));
      return;
    }
    this.nextSeq++;
    if (chunk.stream === 'stderr') {
      if (chunk.data === '') this.started?.();
      return;
    }
    this.buffer += chunk.data;
    if (this.buffer.length > MCP_MAX_MESSAGE_BYTES * 2) {
      this.fail(new Error(`the server sent a message over ${MCP_MAX_MESSAGE_BYTES} bytes`));
      return;
    }
    for (let nl = this.buffer.indexOf('\n'); nl >= 0; nl = this.buffer.indexOf('\n')) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      if (line.trim() !== '') this.deliver(line);
    }
  }

  private deliver(line: string): void {
    let message: JSONRPCMessage;
    try {
      if (!this.schema) throw new Error('the transport has not started');
      message = this.schema.parse(JSON.parse(line));
    } catch (e) {
      // Not fatal: servers print logs to stdout by mistake; the SDK reports it and goes on.
      this.onerror?.(new Error(`the server wrote a line that is not a JSON-RPC message: ${(e as Error).message}`));
      return;
    }
    this.onmessage?.(message);
  }

  private fail(e: Error): void {
    this.onerror?.(e);
    this.ended({ error: e });
    void this.close();
  }

  private ended(end: SessionEnd): void {
    if (this.closed) return;
    this.closed = true;
    this.end = end;
    this.stop.abort();
    this.failedToStart?.(new Error(`the server ended before it started: ${endText(end)}`));
    this.onclose?.();
  }
}

/** How a session ended, in words: the daemon's status and error, and the tail of the server's stderr. */
export function endText(end: SessionEnd | undefined): string {
  if (!end) return 'the session did not end';
  if ('error' in end) return end.error.message;
  const r = end.result;
  const how =
    r.error?.message ??
    (r.exitCode !== null ? `the server exited with code ${r.exitCode}` : `the server ended (${r.status})`);
  const tail = r.output.trim().split('\n').slice(-5).join('\n').slice(-1000);
  return tail ? `${how}; its last stderr lines:\n${tail}` : how;
}
