import http from 'node:http';
import { EGRESS_HOST_MAX } from '@gatehouse/shared/egress';
import { splitAbsoluteHttp, splitAuthority } from './authority';
import { endToEndHeaders } from './hop-headers';
import type { ProxyContext } from './proxy-context';
import { resolveTarget } from './resolve-target';

/**
 * An absolute-form `http://` request: decided, then sent to the checked address with the Host
 * header rewritten to the authority that was decided (a different Host would let a client reach
 * another virtual host behind an allowed address). The response, redirects included, goes back as
 * it came: a client that follows a redirect asks the proxy again, and that request is decided anew.
 */
export function forwardRequest(ctx: ProxyContext, req: http.IncomingMessage, res: http.ServerResponse): void {
  const target = splitAbsoluteHttp(req.url ?? '');
  const hostPort = target && splitAuthority(target.authority, 80);
  if (!target || !hostPort) {
    const host = (req.headers.host ?? '').toLowerCase().slice(0, EGRESS_HOST_MAX);
    const reason = /^https:/i.test(req.url ?? '')
      ? 'https:// in absolute form; use CONNECT for TLS'
      : 'not an absolute http:// request: addressed to the proxy itself';
    ctx.log({ event: 'egress.denied', host, port: ctx.ownPort(), phase: ctx.phase, reason });
    refuse(res, 400, reason);
    return;
  }
  void resolveTarget(ctx, hostPort.host, hostPort.port).then((r) => {
    if (!r.ok) return refuse(res, r.status, `${hostPort.host}:${hostPort.port}: ${r.reason}`);
    const upstream = http.request({
      host: r.address,
      port: hostPort.port,
      method: req.method,
      path: target.path,
      headers: [...endToEndHeaders(req.rawHeaders), 'Host', target.authority],
      setHost: false,
      agent: false,
      maxHeaderSize: ctx.limits.maxUpstreamHeaderBytes,
      timeout: ctx.limits.connectTimeoutMs,
    });
    upstream.once('socket', (s) => s.once('connect', () => upstream.setTimeout(ctx.limits.idleTimeoutMs)));
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timed out')));
    upstream.on('error', (e) => {
      if (!res.headersSent) refuse(res, 502, `${hostPort.host}:${hostPort.port}: ${e.message}`);
      else res.destroy();
    });
    upstream.on('response', (up) => {
      res.writeHead(up.statusCode ?? 502, up.statusMessage, endToEndHeaders(up.rawHeaders));
      up.pipe(res);
      up.on('error', () => res.destroy());
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
}

export function refuse(res: http.ServerResponse, status: number, reason: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `gatehouse egress proxy: ${reason}\n`;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-gatehouse-egress': 'denied',
    connection: 'close',
  });
  res.end(body);
}
