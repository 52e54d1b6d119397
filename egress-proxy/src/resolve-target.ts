import { ADDRCONFIG, promises as dns } from 'node:dns';
import { decideAddresses, decideTarget, EGRESS_HOST_MAX, type EgressDecision } from '@gatehouse/shared/egress';
import type { ProxyContext } from './proxy-context';

export type Resolved = { ok: true; address: string } | { ok: false; status: number; reason: string };

/**
 * Decides one request and logs the decision: the host against the lists, then (for a name) every
 * address the proxy's own lookup returns. The address returned is the one that was checked, and
 * the caller connects to it: the name is never looked up twice, so a DNS answer that changes
 * between check and use (rebinding) changes nothing.
 */
export async function resolveTarget(ctx: ProxyContext, rawHost: string, port: number): Promise<Resolved> {
  const host = rawHost.toLowerCase().replace(/\.$/, '').slice(0, EGRESS_HOST_MAX);
  const base = { host, port, phase: ctx.phase };
  const deny = (reason: string, status = 403, address?: string): Resolved => {
    ctx.log({ event: 'egress.denied', ...base, ...(address ? { address } : {}), reason });
    return { ok: false, status, reason };
  };
  if (ctx.selfNames.has(host)) return deny('the proxy itself');
  const target = decideTarget(ctx.policy, rawHost, port);
  if (!target.ok) return deny(target.reason);
  let address: string;
  if (target.kind === 'address') {
    address = target.address;
  } else {
    let found: string[];
    try {
      found = await lookupAll(target.name, ctx.limits.lookupTimeoutMs);
    } catch (e) {
      return deny(`the name did not resolve (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, 502);
    }
    const checked = decideAddresses(ctx.policy, found, port);
    if (!checked.ok) return deny(checked.reason, 403, checked.address);
    address = checked.address;
  }
  if (port === ctx.ownPort() && ctx.isOwnAddress(address)) return deny('the proxy itself', 403, address);
  const allowed: EgressDecision = { event: 'egress.allowed', ...base, address };
  ctx.log(allowed);
  return { ok: true, address };
}

async function lookupAll(name: string, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'ETIMEOUT' })), timeoutMs);
  });
  try {
    // ADDRCONFIG: no IPv6 answers where the proxy has no IPv6 address to reach them from.
    const answers = await Promise.race([dns.lookup(name, { all: true, verbatim: true, hints: ADDRCONFIG }), timeout]);
    return answers.map((a) => a.address);
  } finally {
    clearTimeout(timer);
  }
}
