import { isEvent, type EventDataOf, type EventEnvelope } from '@gatehouse/shared';
import type { Tool } from '../tools/tool';
import { mcpTool, type ListedTool } from './mcp-tool';
import { mcpSchemaValidator } from './schema-validator';

/**
 * A run's MCP tools as its log recorded them (`mcp.listed`), in the order they joined its surface,
 * for a replay with no server: the description and input schema the model was shown (replay
 * --mode trace rebuilds the context with them), the server's transport and annotations (what the
 * policy reads: replay --mode dry-run). Such a tool never runs.
 */
export function recordedMcpTools(events: readonly EventEnvelope[]): Array<Tool<never>> {
  const tools: Array<Tool<never>> = [];
  if (!events.some((e) => isEvent(e, 'mcp.listed'))) return tools;
  for (const e of events) {
    if (!isEvent(e, 'mcp.listed')) continue;
    const validators = mcpSchemaValidator();
    for (const t of e.data.tools) {
      const listed = listedAsShown(e.data, t, 1);
      const tool = mcpTool(listed, validators.getValidator<Record<string, unknown>>(t.inputSchema), () =>
        Promise.resolve({ ok: false, output: '', error: { code: 'not_run', message: 'a recorded tool never runs' } }),
      );
      if (!tools.some((x) => x.name === tool.name)) tools.push(tool as Tool<never>);
    }
  }
  return tools;
}

/** A tool as one `mcp.listed` recorded it: the description and schema the model was shown, its annotations. */
export function listedAsShown(
  listing: Pick<EventDataOf<'mcp.listed'>, 'server' | 'transport'>,
  t: EventDataOf<'mcp.listed'>['tools'][number],
  timeoutMs: number,
): ListedTool {
  return {
    server: listing.server,
    transport: listing.transport,
    name: t.name,
    mcpName: t.mcpName,
    description: '',
    shown: t.description,
    inputSchema: t.inputSchema,
    timeoutMs,
    ...(t.annotations ? { annotations: t.annotations } : {}),
  };
}
