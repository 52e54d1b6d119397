import { isEvent, type EventDataOf, type EventEnvelope } from '@gatehouse/shared';
import type { McpServerConfig, McpServers } from '../config/mcp-schema';
import type { LogPort } from '../tools/ports';
import type { Tool } from '../tools/tool';
import { callMcpTool } from './mcp-call';
import type { McpRunPorts } from './mcp-connection';
import { listServer, type ServerListing } from './mcp-listing';
import { mcpTool, type McpArguments } from './mcp-tool';
import { listedAsShown } from './recorded-tools';
import { loadSdk } from './sdk';
import { changedToolMessage, toolChanges } from './tool-changes';

export interface ResumedToolsOptions {
  /** The servers as the run started them (mcp/recorded-servers.ts); absent: the log does not say. */
  servers: McpServers | undefined;
  ports: McpRunPorts;
  log: Pick<LogPort, 'append'>;
  /** The run's log so far: its first `mcp.listed` per server is what the model was shown. */
  events: readonly EventEnvelope[];
}

/**
 * A resumed run's MCP tools (docs/mcp.md, "Resuming"): its servers are started and listed again,
 * and each tool the model was shown is compared with what its server offers now (tool-changes.ts).
 * The model is shown exactly the tools it was shown before, in the same order. An unchanged tool
 * runs as before; a changed or missing one (or every tool of a server that does not start now, or
 * whose start the log does not record) stays on the surface as recorded, and each call to it,
 * a pending approved one included, ends failed with why, nothing sent to the server. A tool the
 * server offers now that the run was not shown is not added. `mcp.resumed` records it per server.
 */
export async function resumedMcpTools(o: ResumedToolsOptions): Promise<Array<Tool<never>>> {
  const shown = firstListings(o.events);
  if (shown.length === 0) return [];
  const validators = new (await loadSdk()).AjvJsonSchemaValidator();
  const now = await Promise.all(
    shown.map(async (l): Promise<{ listing?: ServerListing; ms: number; error?: string }> => {
      const server = o.servers?.[l.server];
      if (!server)
        return { ms: 0, error: "the run's log does not record how to start it (written by a gatehouse before 8)" };
      const listing = await listServer(l.server, server, o.ports, validators);
      return { listing, ms: listing.event.durationMs, ...(listing.event.ok ? {} : { error: listing.event.error }) };
    }),
  );
  const tools: Array<Tool<never>> = [];
  shown.forEach((l, i) => {
    const { listing, ms, error } = now[i]!;
    const offered = new Map((listing?.tools ?? []).map((t) => [t.name, t]));
    const unchanged: string[] = [];
    const changed: EventDataOf<'mcp.resumed'>['changed'] = [];
    for (const t of l.tools) {
      const current = offered.get(t.name);
      const changes = toolChanges(t, current);
      const recorded = listedAsShown(l, t, current?.timeoutMs ?? 1);
      const validate = validators.getValidator<McpArguments>(t.inputSchema);
      if (changes.length === 0 && current) {
        unchanged.push(t.name);
        const server = o.servers?.[l.server] as McpServerConfig;
        tools.push(
          mcpTool(recorded, validate, (tool, args, io) =>
            callMcpTool(server, tool, args, o.ports, io.approval),
          ) as Tool<never>,
        );
        continue;
      }
      changed.push({ name: t.name, change: changes });
      const refusal = changedToolMessage(t.name, changes, current ? undefined : error);
      tools.push(
        mcpTool(recorded, validate, () =>
          Promise.resolve({ ok: false, output: '', error: { code: 'mcp_tool_changed', message: refusal } }),
        ) as Tool<never>,
      );
    }
    const shownNames = new Set(l.tools.map((t) => t.name));
    o.log.append('mcp.resumed', 'runtime', {
      server: l.server,
      ok: error === undefined,
      durationMs: ms,
      unchanged,
      changed,
      notAdded: [...offered.keys()].filter((n) => !shownNames.has(n)),
      ...(error !== undefined ? { error: error.slice(0, 4000) } : {}),
    });
  });
  return tools;
}

/** Each server's first `mcp.listed`, in log order: what the model was shown when the run started. */
function firstListings(events: readonly EventEnvelope[]): Array<EventDataOf<'mcp.listed'>> {
  const seen = new Map<string, EventDataOf<'mcp.listed'>>();
  for (const e of events) if (isEvent(e, 'mcp.listed') && !seen.has(e.data.server)) seen.set(e.data.server, e.data);
  return [...seen.values()];
}
