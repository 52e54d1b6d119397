import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelEvent } from '../../src/providers/types';

/**
 * A local stand-in for a model API: the official SDKs talk real HTTP and SSE to it on 127.0.0.1,
 * and it records every request so tests assert on what the adapters actually sent.
 */
export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  /** The client went away before the response was complete (an aborted request). */
  aborted: boolean;
}

export type Handler = (req: Recorded, res: http.ServerResponse) => void | Promise<void>;

export class FakeServer {
  readonly requests: Recorded[] = [];
  #queue: Handler[] = [];
  #fallback: Handler | undefined;
  #server: http.Server;
  #port = 0;
  /** Resolves each time a request's connection closes early; tests await it to see an abort land. */
  #abortWaiters: Array<() => void> = [];

  private constructor() {
    this.#server = http.createServer((req, res) => void this.#handle(req, res));
  }

  static async start(): Promise<FakeServer> {
    const fake = new FakeServer();
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    fake.#port = (fake.#server.address() as AddressInfo).port;
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Handlers answer requests in order; after the queue, the fallback (or a loud 599). */
  enqueue(...handlers: Handler[]): this {
    this.#queue.push(...handlers);
    return this;
  }

  always(handler: Handler): this {
    this.#fallback = handler;
    return this;
  }

  nextAbort(): Promise<void> {
    return new Promise((resolve) => this.#abortWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const record: Recorded = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
      aborted: false,
    };
    this.requests.push(record);
    res.on('close', () => {
      if (!res.writableFinished) {
        record.aborted = true;
        for (const wake of this.#abortWaiters.splice(0)) wake();
      }
    });
    const handler = this.#queue.shift() ?? this.#fallback;
    if (!handler) {
      json(res, 599, { error: { message: `fake server: no handler for request ${this.requests.length}` } });
      return;
    }
    await handler(record, res);
  }
}

export function json(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export interface SseEvent {
  event?: string;
  data: unknown;
}

/** Writes a Server-Sent Events response; `hold` leaves it open (for cancellation tests). */
export async function sse(
  res: http.ServerResponse,
  events: SseEvent[],
  opts: { hold?: boolean; gapMs?: number; cut?: boolean } = {},
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const e of events) {
    const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
    res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${data}\n\n`);
    if (opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
  }
  if (opts.cut) {
    // Drop the connection without the API's end marker, as a proxy or a crash would (after the
    // bytes so far have reached the client).
    await new Promise((r) => setTimeout(r, 30));
    res.socket?.destroy();
    return;
  }
  if (!opts.hold) res.end();
}

export async function collect(stream: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const events: ModelEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

export function last(events: ModelEvent[]): ModelEvent {
  const event = events.at(-1);
  if (!event) throw new Error('no events');
  return event;
}

/** Splits a string into pieces of `size` characters, as a server streaming arguments would. */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** A port on 127.0.0.1 with nothing listening: connecting to it fails at once. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
