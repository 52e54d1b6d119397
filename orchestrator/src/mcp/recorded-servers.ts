import { canonicalJson, type EventDataOf } from '@gatehouse/shared';
import type { McpServerConfig, McpServers } from '../config/mcp-schema';
import { GatehouseError } from '../errors';

type Environment = NonNullable<NonNullable<EventDataOf<'run.started'>['config']>['environment']>;
/** The MCP servers as run.started records them (`config.environment.mcp`). */
export type RecordedMcpServers = NonNullable<Environment['mcp']>;
type RecordedServer = RecordedMcpServers[string];

/** A resumed run's MCP servers cannot be started as it started them: nothing ran. */
export class McpResumeError extends GatehouseError {
  readonly kind = 'refused';
}

/**
 * How each server is started, for run.started: everything but what may be a credential. Of `env`
 * and `headers` only the names; of a URL with a query string only what comes before it (a token
 * in the query is as much a credential as a header).
 */
export function recordMcpServers(servers: McpServers): RecordedMcpServers {
  const out: RecordedMcpServers = {};
  for (const [name, c] of Object.entries(servers)) out[name] = recordServer(c);
  return out;
}

function recordServer(c: McpServerConfig): RecordedServer {
  const timeout = c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs } : {};
  if (c.command !== undefined)
    return {
      transport: 'stdio',
      command: c.command,
      args: [...(c.args ?? [])],
      ...(c.cwd !== undefined ? { cwd: c.cwd } : {}),
      env: Object.keys(c.env ?? {}).sort(),
      ...timeout,
    };
  const url = new URL(c.url ?? '');
  const query = url.search !== '';
  url.search = '';
  return {
    transport: 'url',
    url: url.href,
    ...(query ? { urlQuery: true as const } : {}),
    headers: Object.keys(c.headers ?? {}).sort(),
    ...timeout,
  };
}

/**
 * The servers a resumed run starts: as its log recorded them, with the values the log does not
 * keep (env and header values, a URL's query) taken from the trusted config given to resume
 * (`gatehouse resume RUN --config FILE`, the file the run started with). A server that config
 * declares differently (another command, arguments, URL or set of names) is refused, as is a
 * needed value it does not give: each is named, and nothing runs.
 */
export function mcpServersForResume(
  runId: string,
  recorded: RecordedMcpServers | undefined,
  given: McpServers | undefined,
): McpServers | undefined {
  if (!recorded || Object.keys(recorded).length === 0) return undefined;
  const out: McpServers = {};
  const missing: string[] = [];
  for (const [name, r] of Object.entries(recorded)) {
    const g = given?.[name];
    const declared = g ? recordServer(g) : undefined;
    if (declared && canonicalJson(declared) !== canonicalJson(r))
      throw new McpResumeError(
        `the config's MCP server ${name} is not the one run ${runId} started with (${differences(declared, r)} ` +
          `differ); pass the config the run started with: gatehouse resume ${runId} --config FILE`,
      );
    const timeout = r.timeoutMs !== undefined ? { timeoutMs: r.timeoutMs } : {};
    if (r.transport === 'stdio') {
      const env: Record<string, string> = {};
      for (const n of r.env ?? []) {
        const v = g?.env?.[n];
        if (v === undefined) missing.push(`mcp.${name}.env.${n}`);
        else env[n] = v;
      }
      out[name] = {
        command: r.command ?? '',
        args: [...(r.args ?? [])],
        ...(r.cwd !== undefined ? { cwd: r.cwd } : {}),
        ...(Object.keys(env).length > 0 ? { env } : {}),
        ...timeout,
      };
    } else {
      const headers: Record<string, string> = {};
      for (const n of r.headers ?? []) {
        const v = g?.headers?.[n];
        if (v === undefined) missing.push(`mcp.${name}.headers.${n}`);
        else headers[n] = v;
      }
      if (r.urlQuery && g?.url === undefined) missing.push(`mcp.${name}.url`);
      out[name] = {
        url: r.urlQuery ? (g?.url ?? '') : (r.url ?? ''),
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        ...timeout,
      };
    }
  }
  if (missing.length > 0)
    throw new McpResumeError(
      `run ${runId} cannot be resumed without ${missing.join(', ')}: its MCP servers need ` +
        `${missing.length === 1 ? 'this value' : 'these values'}, which the log does not keep (they may be ` +
        `credentials). Pass the trusted config the run started with: gatehouse resume ${runId} --config FILE`,
    );
  return out;
}

/** Which of a server's recorded keys differ, by name only (never a value). */
function differences(a: RecordedServer, b: RecordedServer): string {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const differ = [...keys].filter(
    (k) => canonicalJson(a[k as keyof RecordedServer] ?? null) !== canonicalJson(b[k as keyof RecordedServer] ?? null),
  );
  return differ.map((k) => (k === 'env' || k === 'headers' ? `the names in its ${k}` : `its ${k}`)).join(', ');
}
