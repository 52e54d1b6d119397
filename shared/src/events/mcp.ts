import { z } from 'zod';

/**
 * Events of a run's MCP servers (docs/mcp.md). Their calls are tool calls like any other (tool.*);
 * what is recorded here is what each server offered when the run started, so the log says which
 * tools the model was shown and what each claimed about itself.
 */
const Annotations = z.strictObject({
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

/**
 * How a run started one MCP server, as run.started records it (`config.environment.mcp`), so a
 * resumed run starts the same servers again. Never a credential: of `env` and `headers` only the
 * names (their values come from the trusted config given to resume, docs/mcp.md), and of a URL
 * with a query (it may carry a token) only the part before it, with `urlQuery` set.
 */
export const RecordedMcpServer = z.strictObject({
  transport: z.enum(['stdio', 'url']),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  cwd: z.string().optional(),
  url: z.string().optional(),
  urlQuery: z.literal(true).optional(),
  env: z.array(z.string()).optional(),
  headers: z.array(z.string()).optional(),
  timeoutMs: z.number().int().positive().optional(),
});

export const McpEventData = {
  'mcp.listed': z.strictObject({
    server: z.string(),
    transport: z.enum(['stdio', 'url']),
    ok: z.boolean(),
    durationMs: z.number().nonnegative(),
    /**
     * The tools that joined the surface, in order: gatehouse's name, the server's, the description and
     * input schema the model was shown (bounded: 64 tools, 16 KiB a schema), and the server's annotations.
     */
    tools: z.array(
      z.strictObject({
        name: z.string(),
        mcpName: z.string(),
        description: z.string(),
        inputSchema: z.record(z.string(), z.unknown()),
        annotations: Annotations.optional(),
      }),
    ),
    /** Tools the server listed that did not join, and why (a name that maps onto another, a schema too big). */
    skipped: z.array(z.strictObject({ mcpName: z.string(), reason: z.string() })),
    /** Why the server offered nothing (it did not start, did not answer, is not reachable). */
    error: z.string().optional(),
  }),
  /**
   * A resumed run's servers, started and listed again (schema 8): each tool the model was shown
   * (the first `mcp.listed`) compared with what the server offers now. An unchanged tool runs; a
   * changed or missing one stays on the surface as recorded and every call to it is refused unrun.
   */
  'mcp.resumed': z.strictObject({
    server: z.string(),
    ok: z.boolean(),
    durationMs: z.number().nonnegative(),
    unchanged: z.array(z.string()),
    changed: z.array(
      z.strictObject({
        name: z.string(),
        change: z.array(z.enum(['description', 'inputSchema', 'annotations', 'missing'])),
      }),
    ),
    /** Tools the server offers now that the run was not shown: not added (the prompt does not change). */
    notAdded: z.array(z.string()),
    /** Why the server offered nothing now (it did not start, is not reachable, the log does not say how). */
    error: z.string().optional(),
  }),
} as const;
