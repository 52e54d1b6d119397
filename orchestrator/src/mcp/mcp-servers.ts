import type { McpServerConfig, McpServers } from '../config/mcp-schema';
import type { LogPort } from '../tools/ports';
import type { Tool } from '../tools/tool';
import { callMcpTool } from './mcp-call';
import type { McpRunPorts } from './mcp-connection';
import { listServer } from './mcp-listing';
import { mcpTool, type ListedTool, type McpArguments } from './mcp-tool';
import { mcpSchemaValidator } from './schema-validator';

export interface McpServersOptions {
  servers: McpServers;
  ports: McpRunPorts;
  log: Pick<LogPort, 'append'>;
}

/**
 * Lists the tools of every configured server once the run's sandbox is up (a stdio server is
 * started for the listing and stopped after it), records what each offered (`mcp.listed`), and
 * returns them as gatehouse tools. A server that does not start, answer or list is recorded with
 * why and contributes nothing; the run goes on without it. Each later call gets a session of its
 * own (docs/mcp.md: a server process lives for one call, so nothing of the command user outlives
 * the call that the daemon's sweep would otherwise end).
 */
export async function listMcpTools(o: McpServersOptions): Promise<Array<Tool<never>>> {
  const call = (t: ListedTool, args: McpArguments, approval: { id: string; by: 'policy' | 'user' } | undefined) =>
    callMcpTool(o.servers[t.server] as McpServerConfig, t, args, o.ports, approval);
  // A validator per server: one server's schemas cannot stand in for another's (schema-validator.ts).
  const lists = await Promise.all(
    Object.entries(o.servers).map(async ([name, server]) => {
      const validators = mcpSchemaValidator();
      return { validators, ...(await listServer(name, server, o.ports, validators)) };
    }),
  );
  const tools: Array<Tool<never>> = [];
  // In the order of the config, as the tools join the surface: the log says exactly what was shown, in order.
  for (const listing of lists) o.log.append('mcp.listed', 'runtime', listing.event);
  for (const listing of lists)
    for (const t of listing.tools) {
      const validate = listing.validators.getValidator<McpArguments>(t.inputSchema);
      tools.push(mcpTool(t, validate, (tool, args, io) => call(tool, args, io.approval)) as Tool<never>);
    }
  return tools;
}
