import { z } from 'zod';

/**
 * The config's `mcp` section (docs/mcp.md): MCP servers by name, each a stdio server run inside the
 * sandbox (`command`, `args`, `env`) or a streamable HTTP server (`url`, `headers`). A name becomes
 * part of tool names (`mcp__NAME__tool`) and policy rules, so it is held to what a rule can spell.
 * Env values, header values and URLs may hold credentials: messages about them never show the value
 * (read-config.ts strips it), and the run's redactor hides env and header values (run-redactor.ts).
 */
export const MCP_NAME_PATTERN = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

const ServerName = z
  .string()
  .max(32, { error: 'an MCP server name is at most 32 characters' })
  .regex(MCP_NAME_PATTERN, {
    error:
      'an MCP server name is lower-case letters and digits, words joined by single underscores (fs, git_hub): ' +
      'it becomes part of tool names (mcp__NAME__tool)',
  });

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, {
  error: 'an environment variable name is letters, digits and _ (not starting with a digit)',
});
const Secret = z.string({ error: 'expected a string' }).max(32 * 1024, { error: 'at most 32 KiB' });
const Timeout = z
  .number({ error: 'expected milliseconds (a whole number from 1000 to 600000)' })
  .int({ error: 'expected milliseconds (a whole number from 1000 to 600000)' })
  .min(1000, { error: 'expected milliseconds (a whole number from 1000 to 600000)' })
  .max(600_000, { error: 'expected milliseconds (a whole number from 1000 to 600000)' });

const HeaderName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/, { error: 'not a valid header name' });

/**
 * One server: `command` (with `args`, `env`, `cwd`) for stdio, or `url` (with `headers`) for
 * streamable HTTP. One object with every key rather than a union of two, so a problem is reported
 * at its key (and an unknown key with the closest known one), never as the whole entry, which
 * would show its values.
 */
export const McpServerConfig = z
  .strictObject(
    {
      command: z
        .string({ error: 'expected the program to run (a string), such as node or npx' })
        .trim()
        .min(1, { error: 'the command cannot be empty' })
        .max(4096)
        .optional(),
      args: z
        .array(z.string({ error: 'expected a string' }).max(32 * 1024), { error: 'expected a list ([...])' })
        .max(256)
        .optional(),
      env: z.record(EnvName, Secret, { error: 'expected an object of variables ({"NAME": "value"})' }).optional(),
      /** Working directory inside the workspace (default: its root). */
      cwd: z
        .string({ error: 'expected a workspace path' })
        .min(1)
        .max(4096)
        .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), {
          error: 'a path inside the workspace, relative to its root',
        })
        .optional(),
      url: z
        .string({ error: 'expected a URL (http:// or https://)' })
        .superRefine((u, ctx) => {
          const problem = urlProblem(u);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .optional(),
      headers: z
        .record(
          HeaderName,
          Secret.refine((v) => !/[\r\n]/.test(v), { error: 'a header value holds no line break' }),
          {
            error: 'expected an object of headers ({"Authorization": "..."})',
          },
        )
        .optional(),
      /** How long one tool call may take (default 60 s); listing the tools at start gets the same. */
      timeoutMs: Timeout.optional(),
    },
    { error: 'expected an object: {"command": ..., "args": [...], "env": {...}} (stdio) or {"url": ...}' },
  )
  .superRefine((c, ctx) => {
    if ((c.command === undefined) === (c.url === undefined))
      ctx.addIssue({ code: 'custom', message: 'give either "command" (a stdio server) or "url" (streamable HTTP)' });
    const misplaced = c.command !== undefined ? (['headers'] as const) : (['args', 'env', 'cwd'] as const);
    for (const key of misplaced)
      if (c[key] !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: c.command !== undefined ? 'only a URL server takes "headers"' : `only a stdio server takes "${key}"`,
        });
  });
export type McpServerConfig = z.infer<typeof McpServerConfig>;

export const McpServers = z
  .record(ServerName, McpServerConfig, { error: 'expected an object of MCP servers by name ({"fs": {...}})' })
  .refine((servers) => Object.keys(servers).length <= 16, { error: 'at most 16 MCP servers' });
export type McpServers = z.infer<typeof McpServers>;

/** What is wrong with a server URL, in words that never repeat it (it may hold a token). */
function urlProblem(s: string): string | undefined {
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return 'not a URL (write it in full: https://host/path)';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'only http:// and https:// URLs are supported';
  if (url.username !== '' || url.password !== '')
    return 'a URL with a user or password is refused: give credentials in "headers"';
  if (url.hash !== '') return 'a URL with a #fragment is refused';
  return undefined;
}

/**
 * Whether a config path may hold a credential (never shown in messages): anything under `mcp` but a
 * server's command, args, cwd and timeout; a whole entry or section would show its env and headers.
 */
export function isMcpSecretPath(path: string): boolean {
  return /^mcp(\.|\[|$)/.test(path) && !/^mcp\.[^.[]+\.(command|args|cwd|timeoutMs)(\.|\[|$)/.test(path);
}
