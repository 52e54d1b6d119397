import { z } from 'zod';
import { Id } from '../ids';
import { MAX_PATH_LENGTH } from './limits';

/**
 * The daemon's side of an MCP stdio server (docs/mcp.md). The daemon knows nothing of MCP: it starts
 * the program a signed invocation names as the command user, passes lines to its stdin, and streams
 * its stdout back as output chunks, one message per line, each bounded. The orchestrator speaks the
 * protocol over that (the SDK's Client on a Transport of its own).
 */

/** One JSON-RPC message (one line) in either direction may be this long; a longer one ends the session. */
export const MCP_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** A line is streamed in pieces of at most this size (an output chunk must fit a NATS message when escaped). */
export const MCP_CHUNK_BYTES = 256 * 1024;

/** An MCP server's name as the config declares it: lower case, digits, single underscores (part of tool names). */
export const McpServerName = z
  .string()
  .regex(/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/)
  .max(32);

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/);

/**
 * Starts a server and serves it until it exits, is cancelled, times out, or writes a line over
 * MCP_MAX_MESSAGE_BYTES. Its stdout arrives as output chunks of this invocation; its stderr (head and
 * tail) is the result's output.
 */
export const McpSessionInput = z.strictObject({
  server: McpServerName,
  command: z.string().min(1).max(4096),
  args: z.array(z.string().max(32 * 1024)).max(256),
  env: z.record(EnvName, z.string().max(32 * 1024)),
  /** Working directory inside the workspace (default: its root). */
  cwd: z.string().min(1).max(MAX_PATH_LENGTH).optional(),
});

/** One line to the stdin of a running session (the invocation id of its `mcp_session`). */
export const McpSendInput = z.strictObject({
  session: Id,
  line: z
    .string()
    .max(MCP_MAX_MESSAGE_BYTES)
    .refine((s) => !s.includes('\n'), 'a line holds no newline'),
});
