import type http from 'node:http';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseEgressPolicy, type EgressDecision } from '@gatehouse/shared/egress';
import { startProxyServer, type ProxyServer } from '../src/proxy-server';
import { startListener } from './proxy-client';

/** Writes raw bytes to the proxy and collects what comes back until it closes (at most 3 s). */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    let data = '';
    const done = (): void => {
      s.destroy();
      resolve(data);
    };
    const timer = setTimeout(done, 3_000);
    s.on('connect', () => s.write(bytes));
    s.on('data', (c: Buffer) => (data += c.toString('latin1')));
    s.on('error', () => undefined);
    s.on('close', () => {
      clearTimeout(timer);
      resolve(data);
    });
  });
}

/**
 * Red team (issue 12): ways a sandbox might get a second host out of a proxy that allows one, with
 * raw requests no ordinary client sends. `other` must never see a request.
 */
describe('egress proxy against raw requests (red team)', () => {
  let allowed: Awaited<ReturnType<typeof startListener>>;
  let other: Awaited<ReturnType<typeof startListener>>;
  let proxy: ProxyServer;
  const decisions: EgressDecision[] = [];
  beforeAll(async () => {
    // Keep-alive answers, so a second request on the connection is possible at all.
    const keep = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      req.resume();
      res.end('ok\n');
    };
    allowed = await startListener('allowed', keep);
    other = await startListener('other', keep);
    const parsed = parseEgressPolicy([`127.0.0.1:${allowed.port}`]);
    if ('errors' in parsed) throw new Error(parsed.errors.join('; '));
    proxy = await startProxyServer(
      { policy: parsed.policy, phase: 'setup', log: (d) => decisions.push(d) },
      { host: '127.0.0.1', port: 0 },
    );
  });
  afterAll(async () => {
    await proxy.close();
    await allowed.close();
    await other.close();
  });
  afterEach(() => {
    expect(other.seen).toEqual([]);
    allowed.seen.length = 0;
    decisions.length = 0;
  });
  const A = () => `127.0.0.1:${allowed.port}`;
  const O = () => `127.0.0.1:${other.port}`;

  it('keep-alive and pipelining: each request on one connection is decided on its own', async () => {
    const out = await raw(
      proxy.port,
      `GET http://${A()}/one HTTP/1.1\r\nHost: ${A()}\r\n\r\n` +
        `GET http://${O()}/two HTTP/1.1\r\nHost: ${A()}\r\n\r\n` +
        `GET /three HTTP/1.1\r\nHost: ${O()}\r\n\r\n`,
    );
    expect(allowed.seen.map((s) => s.url)).toEqual(['/one']);
    expect(out).toMatch(/403/);
  });

  it('smuggling with Content-Length and Transfer-Encoding together is refused', async () => {
    const inner = `GET http://${O()}/smuggled HTTP/1.1\r\nHost: ${O()}\r\n\r\n`;
    const out = await raw(
      proxy.port,
      `POST http://${A()}/ HTTP/1.1\r\nHost: ${A()}\r\nContent-Length: ${4 + inner.length}\r\n` +
        `Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n${inner}`,
    );
    expect(out).toMatch(/^HTTP\/1\.1 (400|403)|HTTP\/1\.1 200/);
  });

  it('two Content-Length headers, HTTP/1.0 without Host, user info, another port, a mapped IPv6 form', async () => {
    for (const request of [
      `POST http://${A()}/ HTTP/1.1\r\nHost: ${A()}\r\nContent-Length: 0\r\nContent-Length: 60\r\n\r\n` +
        `GET http://${O()}/x HTTP/1.1\r\nHost: ${O()}\r\n\r\n`,
      `GET http://${O()}/ HTTP/1.0\r\n\r\n`,
      `GET http://${A()}@${O()}/ HTTP/1.1\r\nHost: ${A()}\r\n\r\n`,
      `GET http://x:y@${O()}/ HTTP/1.1\r\nHost: ${A()}\r\n\r\n`,
      `GET http://[::ffff:127.0.0.1]:${other.port}/ HTTP/1.1\r\nHost: ${A()}\r\n\r\n`,
      `GET http://[::ffff:7f00:1]:${other.port}/ HTTP/1.1\r\nHost: ${A()}\r\n\r\n`,
      `GET http://127.0.0.1.:${other.port}/ HTTP/1.1\r\n\r\n`,
      `GET http://2130706433:${other.port}/ HTTP/1.1\r\n\r\n`,
      `GET http://0x7f.1:${other.port}/ HTTP/1.1\r\n\r\n`,
      `GET http://127.0.0.1:${allowed.port}:${other.port}/ HTTP/1.1\r\n\r\n`,
      `GET http://127.0.0.1:0${other.port}/ HTTP/1.1\r\n\r\n`,
      `GET HTTP://127.0.0.1:${other.port}/ HTTP/1.1\r\n\r\n`,
      `CONNECT ${O()} HTTP/1.1\r\nHost: ${A()}\r\n\r\n`,
      `CONNECT ${A()}@${O()} HTTP/1.1\r\n\r\n`,
      `CONNECT [::ffff:127.0.0.1]:${other.port} HTTP/1.1\r\n\r\n`,
      `CONNECT localhost:${other.port} HTTP/1.1\r\n\r\n`,
    ]) {
      const out = await raw(proxy.port, request);
      expect(out, request).not.toMatch(/^HTTP\/1\.[01] 200/);
    }
  });
});
