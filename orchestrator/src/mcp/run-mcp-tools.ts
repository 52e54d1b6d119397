import { parseEgressPolicy, type EventEnvelope } from '@gatehouse/shared';
import type { McpServers } from '../config/mcp-schema';
import { recordDecision, type EgressDecisionRecord } from '../environment/prepare-environment';
import type { LogPort, SandboxPort } from '../tools/ports';
import type { ToolRegistry } from '../tools/registry';
import { listMcpTools } from './mcp-servers';
import { resumedMcpTools } from './resumed-tools';

/**
 * A run's MCP tools join its registry and surface once its sandbox is up (docs/mcp.md): listed from
 * the servers the trusted config declares, shown as `mcp__SERVER__TOOL`. None in a read-only run
 * (an MCP call is never a read) and none for a sub-agent (its tools are a subset of its parent's
 * built-in ones). A resumed run (`resumedFrom`: its log so far) gets the tools it was shown, each
 * checked against what its server offers now (resumed-tools.ts). Returns the surface with them.
 */
export async function withMcpTools(o: {
  servers: McpServers | undefined;
  egress: { agent: readonly string[]; deny: readonly string[] };
  mode: string;
  depth: number;
  registry: ToolRegistry;
  surface: readonly string[];
  sandbox: SandboxPort;
  log: LogPort;
  resumedFrom?: readonly EventEnvelope[];
}): Promise<readonly string[]> {
  if (o.mode === 'read-only' || o.depth > 0) return o.surface;
  // A resumed run whose log lists tools keeps them even when the servers are not known now (an older log).
  if (!o.resumedFrom && (!o.servers || Object.keys(o.servers).length === 0)) return o.surface;
  const parsed = parseEgressPolicy(o.egress.agent, o.egress.deny);
  // The config's lists were checked when it loaded; one that does not parse here allows nothing.
  const egress = 'policy' in parsed ? parsed.policy : { allow: [], deny: [] };
  const ports = { sandbox: o.sandbox, egress, onEgress: (d: EgressDecisionRecord) => recordDecision(o.log, d) };
  const tools = o.resumedFrom
    ? await resumedMcpTools({ servers: o.servers, ports, log: o.log, events: o.resumedFrom })
    : await listMcpTools({ servers: o.servers ?? {}, ports, log: o.log });
  const fresh = tools.filter((t) => !o.registry.get(t.name));
  o.registry.add(fresh);
  return [...o.surface, ...fresh.map((t) => t.name)];
}
