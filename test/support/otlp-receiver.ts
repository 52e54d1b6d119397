import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeTraceRequest, type DecodedSpan } from './otlp-proto';

/**
 * A local OTLP/HTTP trace receiver on loopback: it takes POST /v1/traces (protobuf, gzip or not),
 * decodes every request and keeps the spans and the headers each came with. `connections` counts
 * every TCP connection made to it, whatever was sent. `mode: 'silent'` accepts connections and
 * never answers (a collector that hangs).
 */
export interface OtlpReceiver {
  endpoint: string;
  port: number;
  spans: DecodedSpan[];
  requests: Array<{ path: string; headers: IncomingHttpHeaders; spans: number }>;
  connections: number;
  close(): Promise<void>;
}

export async function startOtlpReceiver(o: { port?: number; mode?: 'ok' | 'silent' } = {}): Promise<OtlpReceiver> {
  const sockets = new Set<Socket>();
  const r: OtlpReceiver = {
    endpoint: '',
    port: 0,
    spans: [],
    requests: [],
    connections: 0,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (o.mode === 'silent') return; // never answers
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const spans = req.url === '/v1/traces' ? decodeTraceRequest(body) : [];
      r.spans.push(...spans);
      r.requests.push({ path: req.url ?? '', headers: req.headers, spans: spans.length });
      // An empty ExportTraceServiceResponse: full success.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.alloc(0));
    });
  });
  server.on('connection', (s: Socket) => {
    r.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', () => resolve());
  });
  r.port = (server.address() as AddressInfo).port;
  r.endpoint = `http://127.0.0.1:${r.port}`;
  return r;
}

/** Waits (bounded) until `ok()` holds. */
export async function until(ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}
