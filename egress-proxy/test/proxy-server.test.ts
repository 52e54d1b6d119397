import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseEgressPolicy, type EgressDecision } from '@gatehouse/shared/egress';
import { startProxyServer, type ProxyServer, type ProxyServerOptions } from '../src/proxy-server';
import { connectVia, startListener, viaProxy } from './proxy-client';

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/**
 * The proxy program in-process, against real listeners on loopback. Loopback is a special address,
 * so every test that is meant to get through lists it literally, which is exactly the exception the
 * grammar has for it.
 */
describe('egress proxy server (in-process, loopback)', () => {
  let allowed: Awaited<ReturnType<typeof startListener>>;
  let other: Awaited<ReturnType<typeof startListener>>;
  let proxy: ProxyServer | undefined;
  let decisions: EgressDecision[] = [];

  beforeAll(async () => {
    allowed = await startListener('allowed');
    other = await startListener('other');
  });
  afterAll(async () => {
    await allowed.close();
    await other.close();
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    decisions = [];
    allowed.seen.length = 0;
    other.seen.length = 0;
  });

  async function start(
    allow: string[],
    deny: string[] = [],
    extra: Partial<ProxyServerOptions> = {},
    listenPort = 0,
  ): Promise<number> {
    const parsed = parseEgressPolicy(allow, deny);
    if ('errors' in parsed) throw new Error(parsed.errors.join('; '));
    proxy = await startProxyServer(
      { policy: parsed.policy, phase: 'setup', log: (d) => decisions.push(d), ...extra },
      { host: '127.0.0.1', port: listenPort },
    );
    return proxy.port;
  }

  it('forwards an allowed http:// request to the listed address, with Host set to what was decided', async () => {
    const port = await start([`127.0.0.1:${allowed.port}`]);
    const r = await viaProxy(port, `http://127.0.0.1:${allowed.port}/pkg?x=1`, { Host: 'evil.example' });
    expect(r).toMatchObject({ status: 200, body: 'allowed\n' });
    expect(allowed.seen).toEqual([{ url: '/pkg?x=1', host: `127.0.0.1:${allowed.port}` }]);
    expect(decisions).toEqual([
      { event: 'egress.allowed', host: '127.0.0.1', port: allowed.port, phase: 'setup', address: '127.0.0.1' },
    ]);
  });

  it('tunnels CONNECT to an allowed address', async () => {
    const port = await start([`127.0.0.1:${allowed.port}`]);
    const r = await connectVia(
      port,
      `127.0.0.1:${allowed.port}`,
      'GET /through-tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*allowed\n$/);
    expect(allowed.seen.map((s) => s.url)).toEqual(['/through-tunnel']);
    expect(decisions.map((d) => d.event)).toEqual(['egress.allowed']);
  });

  it('denies a listener that is not on the list, by forward and by CONNECT, without touching it', async () => {
    const port = await start([`127.0.0.1:${allowed.port}`]);
    const a = await viaProxy(port, `http://127.0.0.1:${other.port}/`);
    const b = await connectVia(port, `127.0.0.1:${other.port}`, 'GET / HTTP/1.1\r\n\r\n');
    expect([a.status, b.status]).toEqual([403, 403]);
    expect(a.headers['x-gatehouse-egress']).toBe('denied');
    expect(a.body).toMatch(/address not on the allowlist/);
    expect(other.seen).toEqual([]);
    expect(decisions).toEqual([
      expect.objectContaining({ event: 'egress.denied', port: other.port, reason: 'address not on the allowlist' }),
      expect.objectContaining({ event: 'egress.denied', port: other.port, reason: 'address not on the allowlist' }),
    ]);
  });

  it('refuses a name that resolves to loopback unless the address is listed literally', async () => {
    let port = await start([`localhost:${allowed.port}`]);
    const byName = await viaProxy(port, `http://localhost:${allowed.port}/`);
    expect(byName.status).toBe(403);
    expect(decisions[0]).toMatchObject({
      event: 'egress.denied',
      host: 'localhost',
      address: '127.0.0.1',
      reason: 'resolves to a loopback address (127.0.0.1) that is not listed literally',
    });
    expect(allowed.seen).toEqual([]);
    await proxy!.close();
    decisions = [];
    port = await start([`localhost:${allowed.port}`, `127.0.0.0/8:${allowed.port}`]);
    const listed = await viaProxy(port, `http://LOCALHOST.:${allowed.port}/`);
    expect(listed).toMatchObject({ status: 200, body: 'allowed\n' });
    expect(decisions).toEqual([
      { event: 'egress.allowed', host: 'localhost', port: allowed.port, phase: 'setup', address: '127.0.0.1' },
    ]);
  });

  it.each(['2130706433', '0x7f.1', '127.1', '0177.0.0.1'])(
    'does not resolve the number-form host %s, even with loopback listed',
    async (host) => {
      const port = await start([`127.0.0.0/8:${allowed.port}`, `*.test.example:${allowed.port}`]);
      const r = await connectVia(port, `${host}:${allowed.port}`, '');
      expect(r.status).toBe(403);
      expect(decisions[0]?.event).toBe('egress.denied');
      expect(decisions[0]?.reason).toMatch(/number-form/);
      expect(allowed.seen).toEqual([]);
    },
  );

  it('lets the deny list win over the allowlist', async () => {
    const port = await start([`127.0.0.1:${allowed.port}`], ['127.0.0.1']);
    const r = await viaProxy(port, `http://127.0.0.1:${allowed.port}/`);
    expect(r.status).toBe(403);
    expect(decisions[0]).toMatchObject({ reason: 'on the deny list (127.0.0.1)' });
    expect(allowed.seen).toEqual([]);
  });

  it('does not follow redirects: the client gets the 302 and nothing else is fetched', async () => {
    const redirect = await startListener('redirect', (_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${other.port}/`, connection: 'close' });
      res.end();
    });
    try {
      const port = await start([`127.0.0.1:${redirect.port}`]);
      const r = await viaProxy(port, `http://127.0.0.1:${redirect.port}/`);
      expect(r.status).toBe(302);
      expect(r.headers.location).toBe(`http://127.0.0.1:${other.port}/`);
      expect(other.seen).toEqual([]);
      expect(decisions).toHaveLength(1);
    } finally {
      await redirect.close();
    }
  });

  it('refuses requests addressed to itself: origin-form, its own address and port, its own names', async () => {
    const own = await freePort();
    const port = await start(
      [`127.0.0.0/8:${own}`, `gatehouse-egress:${own}`],
      [],
      { selfNames: ['gatehouse-egress'] },
      own,
    );
    expect(port).toBe(own);
    const origin = await new Promise<string>((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      s.once('data', (c: Buffer) => resolve(c.toString('utf8')));
      s.on('error', reject);
    });
    expect(origin).toMatch(/^HTTP\/1\.1 400 /);
    const byAddress = await connectVia(port, `127.0.0.1:${port}`, '');
    const byName = await viaProxy(port, `http://gatehouse-egress:${port}/`);
    expect([byAddress.status, byName.status]).toEqual([403, 403]);
    expect(decisions.map((d) => [d.event, d.reason])).toEqual([
      ['egress.denied', 'not an absolute http:// request: addressed to the proxy itself'],
      ['egress.denied', 'the proxy itself'],
      ['egress.denied', 'the proxy itself'],
    ]);
  });

  it('bounds request headers', async () => {
    const port = await start([`127.0.0.1:${allowed.port}`]);
    const r = await viaProxy(port, `http://127.0.0.1:${allowed.port}/`, { 'x-big': 'a'.repeat(20_000) });
    expect(r.status).toBe(431);
    expect(allowed.seen).toEqual([]);
  });

  it('cuts off clients outside its client networks', async () => {
    const port = await start([`127.0.0.1:${allowed.port}`], [], { clients: ['10.0.0.0/8'] });
    await expect(viaProxy(port, `http://127.0.0.1:${allowed.port}/`)).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(allowed.seen).toEqual([]);
  });
});
