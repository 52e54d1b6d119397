import { parseEgressPolicy, type EgressPhase, type EgressPolicy } from '@gatehouse/shared/egress';

export interface ProxyConfig {
  policy: EgressPolicy;
  phase: EgressPhase;
  port: number;
  selfNames: string[];
  clients?: string[];
}

/**
 * The proxy's whole configuration, read once at start from its environment (the orchestrator sets
 * it when it creates the container; a phase's proxy is replaced, never reconfigured):
 *   GATEHOUSE_EGRESS_ALLOW, GATEHOUSE_EGRESS_DENY   JSON arrays of entries (docs/egress.md)
 *   GATEHOUSE_EGRESS_PHASE                          setup | agent
 *   GATEHOUSE_EGRESS_PORT                           default 3128
 *   GATEHOUSE_EGRESS_SELF                           JSON array of names meaning the proxy
 *   GATEHOUSE_EGRESS_CLIENTS                        JSON array of CIDRs clients may come from
 */
export function readProxyConfig(env: NodeJS.ProcessEnv): { config: ProxyConfig } | { errors: string[] } {
  const errors: string[] = [];
  const list = (name: string, required: boolean): unknown[] | undefined => {
    const text = env[name];
    if (text === undefined) {
      if (required) errors.push(`${name} is not set (a JSON array of entries)`);
      return undefined;
    }
    try {
      const v: unknown = JSON.parse(text);
      if (Array.isArray(v)) return v as unknown[];
    } catch {
      // reported below
    }
    errors.push(`${name} is not a JSON array`);
    return undefined;
  };
  const allow = list('GATEHOUSE_EGRESS_ALLOW', true) ?? [];
  const deny = list('GATEHOUSE_EGRESS_DENY', false) ?? [];
  const self = list('GATEHOUSE_EGRESS_SELF', false) ?? [];
  const clients = list('GATEHOUSE_EGRESS_CLIENTS', false);
  const phase = env.GATEHOUSE_EGRESS_PHASE;
  if (phase !== 'setup' && phase !== 'agent') errors.push('GATEHOUSE_EGRESS_PHASE must be "setup" or "agent"');
  const portText = env.GATEHOUSE_EGRESS_PORT ?? '3128';
  const port = Number(portText);
  if (!/^[0-9]{1,5}$/.test(portText) || port < 1 || port > 65535) errors.push('GATEHOUSE_EGRESS_PORT is not a port');
  if (![...self, ...(clients ?? [])].every((s) => typeof s === 'string')) {
    errors.push('GATEHOUSE_EGRESS_SELF and GATEHOUSE_EGRESS_CLIENTS hold strings only');
  }
  const parsed = parseEgressPolicy(allow, deny);
  if ('errors' in parsed) errors.push(...parsed.errors);
  if (errors.length > 0 || 'errors' in parsed) return { errors };
  return {
    config: {
      policy: parsed.policy,
      phase: phase as EgressPhase,
      port,
      selfNames: self as string[],
      ...(clients ? { clients: clients as string[] } : {}),
    },
  };
}
