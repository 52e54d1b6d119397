import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMcpTools } from '../../src/mcp/mcp-servers';
import { urlServerPorts as setup } from './url-ports';

/**
 * Red team (issue 17): a hostile URL server on loopback (the test's own listeners, 127.0.0.1 and
 * 127.0.0.2). Both held: a redirect to a host the allowlist does not name is not followed (and the
 * credentials header goes nowhere else), and an endless event stream ends at the server's timeout.
 */
let hostile: http.Server;
let elsewhere: http.Server;
let port: number;
let elsewherePort: number;
const elsewhereHits: Array<string | undefined> = [];
let endlessClosed = 0;

beforeAll(async () => {
  elsewhere = http.createServer((req, res) => {
    elsewhereHits.push(req.headers.authorization);
    res.writeHead(500).end();
  });
  await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.2', r));
  elsewherePort = (elsewhere.address() as AddressInfo).port;
  hostile = http.createServer((req, res) => {
    if (req.url === '/redirect') {
      res.writeHead(307, { location: `http://127.0.0.2:${elsewherePort}/mcp` }).end();
      return;
    }
    // /endless: an event stream that never ends (bounded here: at most 2000 comments, 5 ms apart).
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let sent = 0;
    const timer = setInterval(() => {
      if (++sent > 2000) return void (clearInterval(timer), res.end());
      res.write(': still here\n\n');
    }, 5);
    res.on('close', () => {
      clearInterval(timer);
      endlessClosed++;
    });
  });
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
  port = (hostile.address() as AddressInfo).port;
});

afterAll(async () => {
  hostile.closeAllConnections();
  await new Promise<void>((r) => hostile.close(() => r()));
  await new Promise<void>((r) => elsewhere.close(() => r()));
});

describe('red team 17: a hostile URL server', () => {
  it('a redirect to a host not on the allowlist is not followed, and the credentials go nowhere else', async () => {
    const { ports, log, events } = setup([`127.0.0.1:${port}`]);
    const tools = await listMcpTools({
      servers: {
        r: { url: `http://127.0.0.1:${port}/redirect`, headers: { Authorization: 'Bearer s3cret-token' } },
      },
      ports,
      log,
    });
    expect(tools).toEqual([]);
    expect(elsewhereHits).toEqual([]);
    const listed = events.find((e) => e.type === 'mcp.listed')!.data;
    expect(listed).toMatchObject({ ok: false });
    expect(String(listed.error)).toMatch(/Redirect to http:\/\/127\.0\.0\.2:\d+\/mcp not followed/);
    // Not even asked for: the only request decided is the first.
    expect(events.filter((e) => e.type.startsWith('egress.')).map((e) => e.data.host)).toEqual(['127.0.0.1']);
  });

  it('an endless event stream ends at the timeout; the connection is closed', async () => {
    const { ports, log, events } = setup([`127.0.0.1:${port}`]);
    const t0 = Date.now();
    const tools = await listMcpTools({
      servers: { e: { url: `http://127.0.0.1:${port}/endless`, timeoutMs: 1000 } },
      ports,
      log,
    });
    expect(tools).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(events.find((e) => e.type === 'mcp.listed')!.data).toMatchObject({ ok: false });
    await expect.poll(() => endlessClosed, { timeout: 5000 }).toBeGreaterThan(0);
  });
});
