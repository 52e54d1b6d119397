import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';

/**
 * A small HTTP listener in its own container on the outside network, under a random alias (the
 * outside network is shared by every run on the engine): one of the project's own containers, the
 * only kind of target a test may send traffic to besides loopback.
 */
export async function startTargetContainer(
  d: Docker,
  image: string,
  network: string,
  reply: string,
): Promise<{ alias: string; address: string; remove(): Promise<void> }> {
  const alias = `egress-e2e-${reply}-${randomBytes(4).toString('hex')}`;
  const container = await d.createContainer({
    name: alias,
    Image: image,
    User: '10001:10001',
    Entrypoint: ['node', '-e'],
    Cmd: [
      `require('http').createServer((q, s) => { s.setHeader('connection', 'close'); ` +
        `s.end(${JSON.stringify(reply)} + ' ' + q.url); }).listen(8080, '0.0.0.0')`,
    ],
    Labels: { 'gatehouse.role': 'test-egress-target' },
    NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: [alias] } } },
    HostConfig: { NetworkMode: network, CapDrop: ['ALL'], Memory: 64 * 1024 * 1024, PidsLimit: 16 },
  });
  const remove = (): Promise<void> => container.remove({ force: true }).then(() => undefined);
  try {
    await container.start();
    const address = (await container.inspect()).NetworkSettings.Networks[network]?.IPAddress;
    if (!address) throw new Error(`${alias} has no address on ${network}`);
    return { alias, address, remove };
  } catch (e) {
    await remove();
    throw e;
  }
}

/**
 * A Node program for the sandbox: each probe through the proxy or direct, reported as JSON.
 * Bounded: every request and connection times out in a few seconds.
 */
export function probeProgram(proxy: { host: string; port: number }, probes: Probe[]): string {
  const source = `
const http = require('http'), net = require('net');
const P = ${JSON.stringify(proxy)};
const fwd = (url) => new Promise((done) => {
  const r = http.request({ host: P.host, port: P.port, path: url, agent: false, timeout: 8000 }, (m) => {
    let b = ''; m.setEncoding('utf8'); m.on('data', (c) => (b += c));
    m.on('end', () => done({ status: m.statusCode, body: b }));
  });
  r.on('timeout', () => r.destroy(new Error('timeout')));
  r.on('error', (e) => done({ error: e.code || e.message }));
  r.end();
});
const tunnel = (authority) => new Promise((done) => {
  const s = net.connect(P); let data = ''; let open = false;
  s.setTimeout(8000, () => s.destroy(new Error('timeout')));
  s.on('connect', () => s.write('CONNECT ' + authority + ' HTTP/1.1\\r\\nHost: ' + authority + '\\r\\n\\r\\n'));
  s.on('data', (c) => {
    data += c;
    if (!open && /^HTTP\\/1\\.1 200/.test(data) && data.includes('\\r\\n\\r\\n')) {
      open = true; data = data.slice(data.indexOf('\\r\\n\\r\\n') + 4);
      s.write('GET /tunnelled HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n');
    }
  });
  s.on('error', (e) => done({ error: e.code || e.message }));
  s.on('close', () => done(open ? { status: 200, body: data.slice(data.indexOf('\\r\\n\\r\\n') + 4) }
    : { status: Number((/^HTTP\\/1\\.1 (\\d+)/.exec(data) || [])[1] || 0), body: data }));
});
const direct = (host, port) => new Promise((done) => {
  const s = net.connect({ host, port, timeout: 3000 });
  s.on('connect', () => { s.destroy(); done({ direct: 'connected' }); });
  s.on('timeout', () => { s.destroy(); done({ direct: 'timeout' }); });
  s.on('error', (e) => done({ direct: e.code }));
});
(async () => {
  const probes = ${JSON.stringify(probes)};
  const out = [];
  for (const p of probes) {
    out.push(p.kind === 'forward' ? await fwd(p.target) : p.kind === 'connect' ? await tunnel(p.target)
      : await direct(p.target.split(':')[0], Number(p.target.split(':')[1])));
  }
  console.log(JSON.stringify(out));
})();`;
  return `node -e 'eval(Buffer.from("${Buffer.from(source).toString('base64')}", "base64").toString("utf8"))'`;
}

export interface Probe {
  kind: 'forward' | 'connect' | 'direct';
  /** A URL for forward, host:port otherwise. */
  target: string;
}

export interface ProbeResult {
  status?: number;
  body?: string;
  error?: string;
  direct?: string;
}
