import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { EgressPolicy } from '@gatehouse/shared';
import type { McpServerConfig } from '../config/mcp-schema';
import type { EgressDecisionRecord } from '../environment/prepare-environment';
import type { SandboxPort } from '../tools/ports';
import { endText, SandboxStdioTransport, type SessionApproval } from './sandbox-transport';
import { loadSdk } from './sdk';
import { allowlistedFetch } from './url-fetch';

/** One tool call (and the listing at start) may take this long unless the server's config says otherwise. */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;
/** A server must start and answer `initialize` within this long (or its own timeout, if shorter). */
const START_TIMEOUT_MS = 30_000;

/** What a connection needs from the run: the sandbox stdio servers run in, the allowlist URL servers are held to. */
export interface McpRunPorts {
  sandbox: SandboxPort;
  egress: EgressPolicy;
  onEgress: (d: EgressDecisionRecord) => void;
}

/** A connected client and how to end its session (the stdio server is stopped, the HTTP session closed). */
export interface McpConnection {
  client: Client;
  /** How the server's session ended, in words (exit code, stderr tail), once it has; for error messages. */
  ended(): string | undefined;
  /** Whether the session was ended for a message over the size limit (the daemon's or the transport's). */
  tooLarge(): boolean;
  close(): Promise<void>;
}

/**
 * Connects the SDK's Client to one server: a stdio server is started inside the sandbox as the
 * command user (sandbox-transport.ts), a URL server is reached over streamable HTTP through the
 * allowlist (url-fetch.ts). The client declares no capabilities: a server cannot ask gatehouse for
 * sampling, roots or input (such a request is answered "method not found").
 */
export async function connectMcp(
  name: string,
  server: McpServerConfig,
  ports: McpRunPorts,
  approval: SessionApproval,
): Promise<McpConnection> {
  const sdk = await loadSdk();
  const timeoutMs = server.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
  const startMs = Math.min(START_TIMEOUT_MS, timeoutMs);
  let transport: Transport;
  let ended: () => string | undefined;
  let tooLarge = (): boolean => false;
  if (server.command !== undefined) {
    const stdio = new SandboxStdioTransport({
      sandbox: ports.sandbox,
      server: {
        server: name,
        command: server.command,
        args: server.args ?? [],
        env: server.env ?? {},
        ...(server.cwd ? { cwd: server.cwd } : {}),
      },
      approval,
      // The whole session: start, initialize, one request, with room to stop.
      timeoutMs: startMs + timeoutMs + 10_000,
      startTimeoutMs: startMs,
    });
    transport = stdio;
    ended = () => (stdio.end ? endText(stdio.end) : undefined);
    tooLarge = () => /over \d+ bytes/.test(ended() ?? '');
  } else {
    transport = new sdk.StreamableHTTPClientTransport(new URL(server.url ?? ''), {
      fetch: allowlistedFetch(ports.egress, ports.onEgress),
      ...(server.headers ? { requestInit: { headers: server.headers } } : {}),
    });
    ended = () => undefined;
  }
  const client = new sdk.Client({ name: 'gatehouse', version: '0.1.0' }, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: startMs });
  } catch (e) {
    await transport.close().catch(() => undefined);
    const why = ended();
    throw new Error(`could not connect to MCP server ${name}: ${(e as Error).message}${why ? ` (${why})` : ''}`);
  }
  return {
    client,
    ended,
    tooLarge,
    close: async () => {
      await client.close().catch(() => undefined);
    },
  };
}
