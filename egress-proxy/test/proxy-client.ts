import http from 'node:http';
import net from 'node:net';

export interface Reply {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** An absolute-form request through the proxy, as curl or npm send with HTTP_PROXY set. */
export function viaProxy(proxyPort: number, url: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: proxyPort, path: url, headers, agent: false, timeout: 10_000 });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * `CONNECT authority` through the proxy; on 200, sends `payload` through the tunnel and collects
 * what comes back until the far end closes. Written on a raw socket so every status is seen.
 */
export function connectVia(proxyPort: number, authority: string, payload: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port: proxyPort });
    let data = '';
    let sent = false;
    s.setTimeout(10_000, () => s.destroy(new Error('timed out')));
    s.on('connect', () => s.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
    s.on('data', (c: Buffer) => {
      data += c.toString('utf8');
      if (!sent && data.startsWith('HTTP/1.1 200') && data.includes('\r\n\r\n')) {
        sent = true;
        data = data.slice(data.indexOf('\r\n\r\n') + 4);
        s.write(payload);
      }
    });
    s.on('error', reject);
    s.on('close', () => {
      if (sent) return resolve({ status: 200, body: data, headers: {} });
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf('\r\n\r\n') + 4), headers: {} });
    });
  });
}

/** A loopback HTTP listener that records what reached it. */
export async function startListener(
  name: string,
  handler?: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<{ port: number; seen: Array<{ url: string; host: string }>; close(): Promise<void> }> {
  const seen: Array<{ url: string; host: string }> = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', host: req.headers.host ?? '' });
    if (handler) return handler(req, res);
    res.setHeader('connection', 'close');
    res.end(`${name}\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
