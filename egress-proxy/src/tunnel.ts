import type http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { splitAuthority } from './authority';
import type { ProxyContext } from './proxy-context';
import { resolveTarget } from './resolve-target';

/**
 * `CONNECT host:port`: decided like any request, then a byte pipe to the checked address. What
 * flows inside (TLS, normally) is not read: the decision is on the host the client named, and the
 * TLS server name it sends inside is its own business (docs/egress.md says what that allows).
 */
export function openTunnel(ctx: ProxyContext, req: http.IncomingMessage, client: Duplex, head: Buffer): void {
  client.on('error', () => undefined);
  const target = splitAuthority(req.url ?? '');
  if (!target) {
    ctx.log({
      event: 'egress.denied',
      host: (req.url ?? '').slice(0, 300).toLowerCase(),
      port: 0,
      phase: ctx.phase,
      reason: 'CONNECT needs host:port',
    });
    return void client.end(status(400, 'CONNECT needs host:port'));
  }
  void resolveTarget(ctx, target.host, target.port).then((r) => {
    if (!r.ok) return void client.end(status(r.status, `${target.host}:${target.port}: ${r.reason}`));
    if (client.destroyed) return;
    const upstream = net.connect({ host: r.address, port: target.port });
    upstream.setTimeout(ctx.limits.connectTimeoutMs);
    const close = (): void => {
      upstream.destroy();
      client.destroy();
    };
    let connected = false;
    upstream.on('timeout', () => {
      if (connected) close();
      else upstream.destroy(new Error('connecting timed out'));
    });
    client.on('close', () => upstream.destroy());
    upstream.on('error', (e) => {
      if (connected) close();
      else client.end(status(502, `${target.host}:${target.port}: ${e.message}`));
    });
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(ctx.limits.idleTimeoutMs);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('close', () => {
      if (connected) client.destroy();
    });
  });
}

function status(code: number, reason: string): string {
  const text = code === 400 ? 'Bad Request' : code === 403 ? 'Forbidden' : 'Bad Gateway';
  const body = `gatehouse egress proxy: ${reason}\n`;
  return (
    `HTTP/1.1 ${code} ${text}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nx-gatehouse-egress: denied\r\nconnection: close\r\n\r\n${body}`
  );
}
