import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { parseEgressPolicy, type EventEnvelope } from '@gatehouse/shared';
import type { McpRunPorts } from '../../src/mcp/mcp-connection';
import type { SandboxPort } from '../../src/tools/ports';

const noSandbox: SandboxPort = {
  sandboxId: 'none',
  invoke: () => Promise.reject(new Error('a URL server never touches the sandbox')),
};

/**
 * What a URL server's listing and calls need from a run, for tests with a server on loopback: the
 * agent allowlist (and deny list) it is held to, and a log that keeps every event appended and every
 * egress decision, in order, as `{type, data}`.
 */
export function urlServerPorts(allow: string[], deny: string[] = []) {
  const parsed = parseEgressPolicy(allow, deny);
  if (!('policy' in parsed)) throw new Error(parsed.errors.join('; '));
  const events: Array<{ type: string; data: Record<string, unknown> }> = [];
  const ports: McpRunPorts = {
    sandbox: noSandbox,
    egress: parsed.policy,
    onEgress: (d) => events.push({ type: d.allowed ? 'egress.allowed' : 'egress.denied', data: { ...d } }),
  };
  const log = {
    append: (type: string, _actor: string, data: unknown) => {
      events.push({ type, data: data as Record<string, unknown> });
      return {} as never;
    },
  };
  return { ports, log, events, envelopes: () => events as unknown as EventEnvelope[] };
}

/**
 * The SDK's own MCP server over streamable HTTP on loopback, stateless: a server and transport per
 * request, as the SDK's stateless example does, its tools registered by `register` each time (so a
 * test can change what it offers between requests).
 */
export async function loopbackMcpServer(
  register: (mcp: McpServer) => void,
  onRequest: () => void = () => undefined,
): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    onRequest();
    const mcp = new McpServer({ name: 'remote', version: '1.0.0' });
    register(mcp);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
