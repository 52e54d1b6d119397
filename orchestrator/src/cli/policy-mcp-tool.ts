import type { McpServers } from '../config/mcp-schema';
import { mcpTool, type ListedTool } from '../mcp/mcp-tool';
import { loadValidatorSync } from '../mcp/sdk';
import { parseMcpName } from '../policy/mcp-names';
import type { Tool } from '../tools/tool';

/** The annotations `policy check --annotations` takes: an MCP server's own claims about its tool. */
const ANNOTATION_KEYS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** What `policy check` knows of an MCP tool it was asked about (there is no server to list it). */
export interface McpToolFacts {
  /** The servers the config declares (docs/mcp.md): they give the tool its transport. */
  servers?: McpServers;
  /** `--annotations`, as JSON: what the server would say of the tool. */
  annotations?: unknown;
  /** `--input-schema`, as JSON: the tool's input schema (default: any object). */
  inputSchema?: unknown;
}

/** How the run's surface would hold the tool, and what of that was assumed rather than declared. */
export interface CheckedMcpTool {
  tool: Tool<unknown>;
  /** Printed with the decision: the server's transport, and whether a config declares it. */
  facts: { server: string; transport: 'stdio' | 'url'; declared: boolean };
}

/**
 * The gatehouse tool for `mcp__SERVER__TOOL`, built by mcp/mcp-tool.ts as a run builds it from a
 * server's listing: the same input check, side effect, hints and path fields reach the policy. The
 * transport comes from the config's server (a URL server's calls are network); a server no config
 * declares is taken as a stdio one. Throws a message for a person when the name or a flag is wrong.
 */
export function checkedMcpTool(name: string, facts: McpToolFacts): CheckedMcpTool | undefined {
  const parsed = parseMcpName(name);
  if (!parsed) return undefined;
  if (parsed.tool === undefined)
    throw new Error(
      `${name} names a whole server (a rule can, a call cannot); name one of its tools, e.g. ${name}__read_file`,
    );
  const declared = facts.servers?.[parsed.server];
  const names = Object.keys(facts.servers ?? {});
  if (declared === undefined && names.length > 0)
    throw new Error(
      `the config declares no MCP server ${parsed.server} (it declares ${names.join(', ')}); a run would have no ` +
        `tool ${name}`,
    );
  const transport = declared?.url !== undefined ? 'url' : 'stdio';
  const inputSchema = jsonObject(facts.inputSchema ?? { type: 'object' }, '--input-schema');
  const listed: ListedTool = {
    server: parsed.server,
    transport,
    name,
    mcpName: parsed.tool,
    description: '',
    inputSchema,
    timeoutMs: 1,
    ...(facts.annotations !== undefined ? { annotations: annotationsOf(facts.annotations) } : {}),
  };
  let validate;
  try {
    validate = new (loadValidatorSync())().getValidator<Record<string, unknown>>(inputSchema);
  } catch (e) {
    throw new Error(`--input-schema does not compile: ${(e as Error).message.slice(0, 200)}`);
  }
  const tool = mcpTool(listed, validate, () =>
    Promise.resolve({ ok: false, output: '', error: { code: 'not_run', message: 'policy check runs nothing' } }),
  );
  return { tool: tool, facts: { server: parsed.server, transport, declared: declared !== undefined } };
}

function jsonObject(value: unknown, flag: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${flag} must be a JSON object`);
  return value as Record<string, unknown>;
}

function annotationsOf(value: unknown): NonNullable<ListedTool['annotations']> {
  const a = jsonObject(value, '--annotations');
  const out: NonNullable<ListedTool['annotations']> = {};
  for (const [key, v] of Object.entries(a)) {
    if (!(ANNOTATION_KEYS as readonly string[]).includes(key))
      throw new Error(`--annotations: unknown key ${JSON.stringify(key)}; the keys are ${ANNOTATION_KEYS.join(', ')}`);
    if (typeof v !== 'boolean') throw new Error(`--annotations: ${key} must be true or false`);
    out[key as (typeof ANNOTATION_KEYS)[number]] = v;
  }
  return out;
}
