import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import {
  networkContains,
  parseEgressList,
  parseIp,
  specialAddressKind,
  unmapIpv4,
  type EgressDecision,
  type EgressPhase,
  type EgressPolicy,
  type IpNetwork,
} from '@gatehouse/shared/egress';
import { forwardRequest } from './forward';
import { DEFAULT_LIMITS, type ProxyLimits } from './limits';
import type { ProxyContext } from './proxy-context';
import { openTunnel } from './tunnel';

export interface ProxyServerOptions {
  policy: EgressPolicy;
  phase: EgressPhase;
  log: (decision: EgressDecision) => void;
  /** Names that mean the proxy itself (its network alias, its host name); refused as targets. */
  selfNames?: readonly string[];
  /** CIDRs clients may connect from (the run network); others are cut off at once. Default: any. */
  clients?: readonly string[];
  limits?: Partial<ProxyLimits>;
}

export interface ProxyServer {
  port: number;
  close(): Promise<void>;
}

/** An HTTP forward proxy (absolute-form http:// requests and CONNECT tunnels) that decides every request. */
export async function startProxyServer(
  opts: ProxyServerOptions,
  listen: { host: string; port: number },
): Promise<ProxyServer> {
  const limits = { ...DEFAULT_LIMITS, ...opts.limits };
  const clients = parseClients(opts.clients);
  let port = listen.port;
  const ctx: ProxyContext = {
    policy: opts.policy,
    phase: opts.phase,
    limits,
    selfNames: new Set([...(opts.selfNames ?? [])].map((n) => n.toLowerCase().replace(/\.$/, ''))),
    isOwnAddress,
    ownPort: () => port,
    log: opts.log,
  };
  const server = http.createServer({
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: 5_000,
  });
  server.maxConnections = limits.maxConnections;
  const sockets = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    if (clients && !clientAllowed(clients, s.remoteAddress)) return void s.destroy();
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('request', (req, res) => forwardRequest(ctx, req, res));
  server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) =>
    openTunnel(ctx, req, socket, head),
  );
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket) => {
    const host = (req.headers.host ?? '').toLowerCase().slice(0, 300);
    ctx.log({ event: 'egress.denied', host, port: 0, phase: ctx.phase, reason: 'protocol upgrades are not proxied' });
    socket.end('HTTP/1.1 501 Not Implemented\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  server.on('clientError', (e: NodeJS.ErrnoException, socket: net.Socket) => {
    const status =
      e.code === 'HPE_HEADER_OVERFLOW'
        ? '431 Request Header Fields Too Large'
        : e.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? '408 Request Timeout'
          : '400 Bad Request';
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  port = (server.address() as net.AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

function parseClients(cidrs: readonly string[] | undefined): IpNetwork[] | undefined {
  if (!cidrs) return undefined;
  const parsed = parseEgressList(cidrs);
  if ('errors' in parsed) throw new Error(`bad client networks: ${parsed.errors.join('; ')}`);
  return parsed.rules.map((r) => {
    if (r.kind !== 'address' || r.port !== undefined) throw new Error(`client network ${r.entry} is not a CIDR`);
    return r.network;
  });
}

function clientAllowed(clients: IpNetwork[], remote: string | undefined): boolean {
  const ip = remote === undefined ? undefined : parseIp(remote);
  return ip !== undefined && clients.some((n) => networkContains(n, unmapIpv4(ip)));
}

/** Loopback, unspecified, and every address on the proxy's own interfaces. */
function isOwnAddress(address: string): boolean {
  const parsed = parseIp(address);
  if (!parsed) return false;
  const ip = unmapIpv4(parsed);
  const kind = specialAddressKind(ip);
  if (kind === 'loopback' || kind === 'unspecified') return true;
  for (const i of Object.values(os.networkInterfaces()).flat()) {
    const own = i ? parseIp(i.address.replace(/%.*$/, '')) : undefined;
    if (own && own.family === ip.family && own.value === ip.value) return true;
  }
  return false;
}
