import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { decideAddresses, decideTarget, STREAM_CAP, type EgressPolicy } from '@gatehouse/shared';
import type { EgressDecisionRecord } from '../environment/prepare-environment';

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * The fetch a URL server's transport uses (docs/mcp.md): every request is decided against the run's
 * agent allowlist as the egress proxy decides it (shared/src/egress: the name, then every address
 * it resolves to, special addresses only when listed literally), recorded as `egress.allowed` or
 * `egress.denied`, and sent to the very address that was checked, so the name is not looked up
 * again (no DNS rebinding). Redirects are not followed here; the SDK asks again and is decided anew.
 * A response body over STREAM_CAP bytes is cut off with an error.
 *
 * Why not through the run's egress proxy: the proxy serves only clients on the run's internal
 * network, where the orchestrator's host has no address (the network is created with inhibit_ipv4).
 */
export function allowlistedFetch(policy: EgressPolicy, onDecision: (d: EgressDecisionRecord) => void): FetchLike {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input.href);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const refuse = (reason: string, address?: string): never => {
      onDecision({ allowed: false, host, port, phase: 'agent', reason, ...(address ? { address } : {}) });
      throw new Error(`${host}:${port} is not reachable: ${reason} (the config's egress.agent decides; docs/mcp.md)`);
    };
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return refuse(`the scheme ${url.protocol} is refused`);
    const target = decideTarget(policy, host, port);
    if (!target.ok) return refuse(target.reason);
    let address: string;
    if (target.kind === 'address') address = target.address;
    else {
      const answers = await lookup(host, { all: true }).catch((e: Error) =>
        refuse(`the name did not resolve: ${e.message}`),
      );
      const d = decideAddresses(
        policy,
        answers.map((a) => a.address),
        port,
      );
      if (!d.ok) return refuse(d.reason, d.address);
      address = d.address;
    }
    onDecision({ allowed: true, host, port, phase: 'agent', address });
    return pinned(url, init ?? {}, address);
  };
}

/** One request to `address`, the URL's host kept for the Host header and TLS server name. */
function pinned(url: URL, init: RequestInit, address: string): Promise<Response> {
  const body = init.body;
  if (body !== undefined && body !== null && typeof body !== 'string')
    return Promise.reject(new Error('only text request bodies are sent to MCP servers'));
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((v, k) => (headers[k] = v));
  const family = address.includes(':') ? 6 : 4;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: init.method ?? 'GET',
        headers,
        lookup: (_host, opts, cb) =>
          (opts as { all?: boolean }).all
            ? (cb as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }])
            : (cb as (e: null, a: string, f: number) => void)(null, address, family),
      },
      (res) => {
        const out = new Headers();
        for (const [k, v] of Object.entries(res.headers))
          if (v !== undefined) for (const one of Array.isArray(v) ? v : [v]) out.append(k, one);
        const status = res.statusCode ?? 502;
        const empty = status === 204 || status === 304 || (init.method ?? 'GET') === 'HEAD';
        if (empty) res.resume();
        resolve(
          new Response(empty ? null : (Readable.toWeb(capped(res)) as ReadableStream<Uint8Array>), {
            status,
            statusText: res.statusMessage ?? '',
            headers: out,
          }),
        );
      },
    );
    req.on('error', reject);
    const signal = init.signal;
    if (signal) {
      if (signal.aborted) req.destroy(new Error('aborted'));
      signal.addEventListener('abort', () => req.destroy(new Error('aborted')), { once: true });
    }
    req.end(body ?? undefined);
  });
}

/** The response body, ended with an error past STREAM_CAP bytes. */
function capped(res: http.IncomingMessage): Readable {
  let seen = 0;
  res.on('data', (c: Buffer) => {
    seen += c.length;
    if (seen > STREAM_CAP) res.destroy(new Error(`the server's response is over ${STREAM_CAP} bytes`));
  });
  return res;
}
