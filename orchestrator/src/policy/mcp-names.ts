import { workspaceKey } from '@gatehouse/shared';

/**
 * How MCP tools are named on gatehouse's surface and in policy rules (docs/mcp.md): `mcp__SERVER__TOOL`,
 * and `mcp__SERVER` for a rule over every tool of a server. A server name has no double underscore
 * (config/mcp-schema.ts), so the first `__` after it ends it and a name reads one way only. The tool
 * part is the server's own name in lower case with anything but letters, digits and `_` made `_`,
 * which is what model APIs and the rule syntax accept; the whole is at most 64 characters.
 */
export const MCP_PREFIX = 'mcp__';
const MCP_NAME = /^mcp__([a-z][a-z0-9]*(?:_[a-z0-9]+)*)(?:__([a-z0-9_]+))?$/;
export const MAX_TOOL_NAME = 64;

/** The surface name of a server's tool, or undefined when it cannot have one (empty, or too long). */
export function mcpToolName(server: string, tool: string): string | undefined {
  const part = tool.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const name = `${MCP_PREFIX}${server}__${part}`;
  return part !== '' && name.length <= MAX_TOOL_NAME ? name : undefined;
}

/** `mcp__fs__write_file` is `{server: 'fs', tool: 'write_file'}`; `mcp__fs` is `{server: 'fs'}`; others undefined. */
export function parseMcpName(name: string): { server: string; tool?: string } | undefined {
  const m = MCP_NAME.exec(name);
  if (!m) return undefined;
  return m[2] === undefined ? { server: m[1] as string } : { server: m[1] as string, tool: m[2] };
}

export function isMcpName(name: string): boolean {
  return parseMcpName(name) !== undefined;
}

/** The arguments of an MCP call that name paths: rules' patterns match these (their workspace keys). */
export const MCP_PATH_FIELDS = ['path', 'source', 'destination'] as const;
export const MCP_PATH_LIST_FIELD = 'paths';

/**
 * The workspace keys of every path an MCP call names: its `path`, `source`, `destination`, each entry
 * of `paths`, and the resolved forms the pipeline adds (`paths.0`, see tools/path-decision.ts). Each
 * also in its NFC and NFD forms: a server may open the entry that is only Unicode-equivalent to the
 * name asked for (server-filesystem does, for a name that does not exist as written), so a deny on
 * `café/**` must catch `cafe\u0301/k` too, and an allow must cover every form.
 */
export function mcpPathSubjects(input: unknown): string[] {
  if (typeof input !== 'object' || input === null) return [];
  const out: string[] = [];
  const add = (v: unknown): void => {
    if (typeof v !== 'string') return;
    const key = workspaceKey(v);
    out.push(key, key.normalize('NFC'), key.normalize('NFD'));
  };
  for (const [key, value] of Object.entries(input)) {
    if ((MCP_PATH_FIELDS as readonly string[]).includes(key) || /^paths\.\d+$/.test(key)) add(value);
    if (key === MCP_PATH_LIST_FIELD && Array.isArray(value)) value.forEach(add);
  }
  return [...new Set(out)];
}
