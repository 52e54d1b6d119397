import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { EventDataOf } from '@gatehouse/shared';
import type { McpServerConfig } from '../config/mcp-schema';
import { mcpToolName } from '../policy/mcp-names';
import { connectMcp, DEFAULT_MCP_TIMEOUT_MS, type McpRunPorts } from './mcp-connection';
import { shownDescription, type ListedTool } from './mcp-tool';

/** Pages of tools/list read from one server, and tools taken from it: a server cannot flood the surface. */
const MAX_PAGES = 10;
const MAX_TOOLS = 64;
/**
 * The names MCP gives tools (its specification: 1 to 128 of these characters). Another is not
 * offered: the name is the server's text, and it reaches the harness's own words (the frame's
 * provenance line after a result, "data from MCP server fs (tool NAME)"), where a name carrying a
 * newline and instructions would read as gatehouse speaking.
 */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** A tool whose input schema is bigger than this is not offered (it would fill the model's context and the log). */
const MAX_SCHEMA_BYTES = 16 * 1024;

/** One server's listing: its tools, and the `mcp.listed` that records it (written in config order). */
export interface ServerListing {
  tools: ListedTool[];
  event: EventDataOf<'mcp.listed'>;
}

/**
 * Connects to one server (a stdio server is started for this and stopped after), reads its tools,
 * and keeps those that can join: a name that fits, an object schema within MAX_SCHEMA_BYTES that
 * compiles, no two tools on one gatehouse name. A server that does not start, answer or list
 * yields no tools and an event that says why.
 */
export async function listServer(
  name: string,
  server: McpServerConfig,
  ports: McpRunPorts,
  validators: jsonSchemaValidator,
): Promise<ServerListing> {
  const t0 = performance.now();
  const transport = server.command !== undefined ? ('stdio' as const) : ('url' as const);
  const event = (
    data: Omit<EventDataOf<'mcp.listed'>, 'server' | 'transport' | 'durationMs'>,
  ): EventDataOf<'mcp.listed'> => ({
    server: name,
    transport,
    durationMs: Math.round(performance.now() - t0),
    ...data,
  });
  let raw: Array<{ name: string; description?: string; inputSchema: unknown; annotations?: ListedTool['annotations'] }>;
  try {
    const conn = await connectMcp(name, server, ports, { id: 'runtime:mcp-list', by: 'runtime' });
    try {
      raw = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES && raw.length < MAX_TOOLS; page++) {
        const timeout = server.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
        const r = await conn.client.listTools(cursor ? { cursor } : {}, { timeout, maxTotalTimeout: timeout });
        raw.push(...r.tools);
        cursor = r.nextCursor;
        if (!cursor) break;
      }
    } finally {
      await conn.close();
    }
  } catch (e) {
    return {
      tools: [],
      event: event({ ok: false, tools: [], skipped: [], error: (e as Error).message.slice(0, 4000) }),
    };
  }
  const skipped: Array<{ mcpName: string; reason: string }> = [];
  const byName = new Map<string, ListedTool>();
  const clashing = new Set<string>();
  for (const t of raw.slice(0, MAX_TOOLS)) {
    const mcpName = String(t.name).slice(0, 200);
    const gh = TOOL_NAME.test(mcpName) ? mcpToolName(name, mcpName) : undefined;
    const schemaBytes = sizeOf(t.inputSchema);
    const schema = t.inputSchema as Record<string, unknown> | undefined;
    const problem = !TOOL_NAME.test(mcpName)
      ? 'its name is not 1 to 128 letters, digits, `_`, `-` and `.` (the characters MCP gives tool names)'
      : gh === undefined
        ? `its name does not fit in a tool name of at most 64 characters (mcp__${name}__…)`
        : schema?.type !== 'object'
          ? 'its input schema is not an object schema'
          : schemaBytes === undefined
            ? 'its input schema is nested too deeply to be read'
            : schemaBytes > MAX_SCHEMA_BYTES
              ? `its input schema is ${schemaBytes} bytes, over ${MAX_SCHEMA_BYTES}`
              : compileProblem(validators, schema);
    if (problem || gh === undefined) {
      skipped.push({ mcpName: recordedName(mcpName), reason: problem ?? 'no name' });
      continue;
    }
    if (byName.has(gh)) clashing.add(gh);
    byName.set(gh, {
      server: name,
      transport,
      name: gh,
      mcpName,
      description: typeof t.description === 'string' ? t.description : '',
      inputSchema: schema as Record<string, unknown>,
      timeoutMs: server.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS,
      ...(t.annotations ? { annotations: pickAnnotations(t.annotations) } : {}),
    });
  }
  // Two tools whose names differ only in case or punctuation would be one gatehouse name: neither is offered.
  for (const gh of clashing) {
    for (const t of raw)
      if (TOOL_NAME.test(String(t.name)) && mcpToolName(name, String(t.name)) === gh)
        skipped.push({ mcpName: String(t.name), reason: `its name is ${gh}, as another tool's is` });
    byName.delete(gh);
  }
  if (raw.length > MAX_TOOLS) skipped.push({ mcpName: '…', reason: `the server listed more than ${MAX_TOOLS} tools` });
  const listed = [...byName.values()];
  const recorded = event({
    ok: true,
    tools: listed.map((t) => ({
      name: t.name,
      mcpName: t.mcpName,
      description: shownDescription(t),
      inputSchema: t.inputSchema,
      ...(t.annotations ? { annotations: t.annotations } : {}),
    })),
    skipped: skipped.slice(0, 200),
  });
  return { tools: listed, event: recorded };
}

/** A skipped tool's name as the log keeps it: one that is not MCP's kind of name is kept escaped, as JSON. */
function recordedName(mcpName: string): string {
  return TOOL_NAME.test(mcpName) ? mcpName : JSON.stringify(mcpName);
}

/**
 * The schema's size as JSON, or undefined when it cannot be written out: a schema nested some
 * ten thousand levels deep fits in a 4 MiB message and makes JSON.stringify overflow the stack,
 * which here would have ended the listing of every server, and the run with it.
 */
function sizeOf(schema: unknown): number | undefined {
  try {
    return Buffer.byteLength(JSON.stringify(schema ?? null));
  } catch {
    return undefined;
  }
}

function compileProblem(validators: jsonSchemaValidator, schema: Record<string, unknown>): string | undefined {
  try {
    validators.getValidator(schema);
    return undefined;
  } catch (e) {
    return `its input schema does not compile: ${(e as Error).message.slice(0, 200)}`;
  }
}

function pickAnnotations(a: Record<string, unknown>): NonNullable<ListedTool['annotations']> {
  const out: NonNullable<ListedTool['annotations']> = {};
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const)
    if (typeof a[key] === 'boolean') out[key] = a[key];
  return out;
}
