import { MCP_MAX_MESSAGE_BYTES } from '@gatehouse/shared';
import type { McpServerConfig } from '../config/mcp-schema';
import type { LocalResult } from '../tools/tool';
import { connectMcp, type McpRunPorts } from './mcp-connection';
import { resultText } from './mcp-result';
import { loadSdk } from './sdk';
import type { ListedTool, McpArguments } from './mcp-tool';

/**
 * One call, in a session of its own: connect (a stdio server is started in the sandbox under the
 * call's approval), call with the server's timeout, close (the server is stopped). Whatever goes
 * wrong becomes a failed result that says what happened; nothing here throws.
 */
export async function callMcpTool(
  server: McpServerConfig,
  t: ListedTool,
  args: McpArguments,
  ports: McpRunPorts,
  approval: { id: string; by: 'policy' | 'user' } | undefined,
): Promise<LocalResult> {
  const { ErrorCode, McpError } = await loadSdk();
  let conn;
  try {
    conn = await connectMcp(t.server, server, ports, approval ?? { id: 'runtime:mcp-call', by: 'runtime' });
  } catch (e) {
    // What went wrong may be the server's own words (its error, its stderr): shown framed, as its output.
    return {
      ok: false,
      output: (e as Error).message.slice(0, 4000),
      error: {
        code: 'mcp_unavailable',
        message: `MCP server ${t.server} did not start or answer; what happened follows`,
      },
    };
  }
  try {
    const r = await conn.client.callTool({ name: t.mcpName, arguments: args }, undefined, {
      timeout: t.timeoutMs,
      maxTotalTimeout: t.timeoutMs,
    });
    const text = resultText(r as { content?: unknown; structuredContent?: unknown });
    if (r.isError === true)
      return {
        ok: false,
        output: text,
        error: { code: 'tool_error', message: 'the tool reported an error (isError)' },
      };
    return { ok: true, output: text };
  } catch (e) {
    // How the session had ended when the call failed, if it had: read before closing it, or every
    // failure would read as "ended" (the close ends it) and a server's own error never show.
    const ended = conn.ended();
    await conn.close();
    const code = e instanceof McpError ? e.code : undefined;
    if (code === ErrorCode.RequestTimeout)
      return {
        ok: false,
        output: '',
        error: {
          code: 'timeout',
          message: `MCP server ${t.server} did not answer within ${t.timeoutMs} ms; its session was stopped`,
        },
      };
    if (conn.tooLarge())
      return {
        ok: false,
        output: '',
        error: {
          code: 'too_large',
          message:
            `MCP server ${t.server} sent a message over ${MCP_MAX_MESSAGE_BYTES} bytes, so its session was stopped ` +
            'and the result is not shown; ask for less (a part of the file, a narrower query)',
        },
      };
    if (code === ErrorCode.ConnectionClosed || ended)
      return {
        ok: false,
        output: ended ?? '',
        error: {
          code: 'server_ended',
          message: `MCP server ${t.server} ended before it answered; the call did not complete`,
        },
      };
    // The error's text is the server's (a JSON-RPC error message): framed as its output, never the harness's words.
    const which = code === undefined ? '' : ` (code ${code})`;
    return {
      ok: false,
      output: (e as Error).message.slice(0, 2000),
      error: { code: 'mcp_error', message: `MCP server ${t.server} answered with an error${which}; its text follows` },
    };
  } finally {
    await conn.close();
  }
}
