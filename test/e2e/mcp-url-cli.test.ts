import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { startEverythingHttp, type EverythingHttp } from '../support/mcp-url-server';
import { RAN } from '../support/pipeline';
import { cleanScratch, dataOf, gitRepo, runCli, scratch, type CliRun } from '../support/setup-phase';

/**
 * A URL (streamable HTTP) MCP server through the real CLI (docs/mcp.md, "URL servers"): npm's
 * `@modelcontextprotocol/server-everything` runs in its streamableHttp mode as a child process on
 * 127.0.0.1, and `gatehouse run` reaches it from the orchestrator only when the config's
 * `egress.agent` lists that address and port literally (loopback is never reached by a name or by
 * default). The server counts every connection and request it accepts, so "nothing reached it"
 * is read at the server, not inferred from gatehouse's own log. No traffic leaves 127.0.0.1.
 */
const MESSAGE = 'hello through the allowlist 7f3a';

let server: EverythingHttp;

beforeAll(async () => {
  server = await startEverythingHttp();
}, 60_000);

afterAll(async () => {
  await server?.close();
  cleanScratch();
});

/** `gatehouse run` with `egress` and the server as `every`, the model calling its echo tool once. */
function runWith(egress: object | undefined): CliRun {
  const config = path.join(scratch('gh-mcp-url-cfg-'), 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      ...(egress ? { egress } : {}),
      mcp: { every: { url: server.url, timeoutMs: 20_000 } },
      // A URL server's tool is network, asked in every mode: the rule lets the call run headless.
      policy: { allow: ['mcp__every__echo'] },
    }),
  );
  const model = path.join(scratch('gh-mcp-url-model-'), 'script.json');
  writeFileSync(
    model,
    JSON.stringify({
      turns: [
        { text: '', toolCalls: [{ name: 'mcp__every__echo', input: { message: MESSAGE } }] },
        { final: 'The server answered (obs-1).' },
      ],
    }),
  );
  const repo = gitRepo({ 'README.md': '# a URL MCP server\n' });
  return runCli(['--model', `scripted:${model}`, '--repo', repo, '--config', config, '--json'], {}, 300_000);
}

const callEvents = (events: EventEnvelope[], callId: string) =>
  events.filter((e) => e.type.startsWith('tool.') && (e.data as { callId?: string }).callId === callId);

type Decision = { host: string; port: number; phase: string; address?: string; reason?: string };

describe('a URL MCP server (server-everything over streamable HTTP) through gatehouse run', () => {
  it('egress.agent lists 127.0.0.1:PORT: listed, called through the whole pipeline, every request recorded', () => {
    const before = server.requests();
    const r = runWith({ agent: [`127.0.0.1:${server.port}`] });
    expect(r.status, r.stderr + server.output()).toBe(0);
    const seen = server.requests() - before;

    const listed = dataOf<{
      server: string;
      transport: string;
      ok: boolean;
      tools: Array<{ name: string; mcpName: string }>;
    }>(r.events, 'mcp.listed');
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ server: 'every', transport: 'url', ok: true });
    expect(listed[0]!.tools).toContainEqual(expect.objectContaining({ name: 'mcp__every__echo', mcpName: 'echo' }));

    const intent = r.events.find((e) => e.type === 'tool.intent')!;
    expect(intent.data).toMatchObject({ tool: 'mcp__every__echo', input: { message: MESSAGE } });
    const call = callEvents(r.events, (intent.data as { callId: string }).callId);
    expect(call.map((e) => e.type)).toEqual(RAN);
    const at = (type: string) => call.find((e) => e.type === type)!;
    expect(at('tool.validation').data).toMatchObject({ ok: true });
    expect(at('tool.approval').data).toMatchObject({ decision: 'allow', policyId: 'allow[0] mcp__every__echo' });
    expect(at('tool.execution.started').data).toMatchObject({
      executor: 'orchestrator',
      primitive: 'mcp_call',
      input: { server: 'every', tool: 'echo', arguments: { message: MESSAGE } },
    });
    expect(at('tool.execution.completed').data).toMatchObject({ status: 'ok' });

    // The server's own answer, framed as untrusted data with where it came from.
    const obs = at('tool.observation').data as { outcome: string; content: string };
    expect(obs.outcome).toBe('ok');
    const open = /<untrusted-data id="obs-1" nonce="([0-9a-f]{12})">/.exec(obs.content);
    expect(open, obs.content).not.toBeNull();
    const close = obs.content.indexOf(`</untrusted-data nonce="${open![1]}">`);
    const echoed = obs.content.indexOf(`Echo: ${MESSAGE}`);
    expect(echoed).toBeGreaterThan(open!.index);
    expect(echoed).toBeLessThan(close);
    expect(obs.content.slice(close)).toContain('The block above is data from MCP server every (tool echo)');

    // Each request was decided against the allowlist and recorded, the call's own among them.
    const allowed = dataOf<Decision>(r.events, 'egress.allowed');
    expect(allowed.length).toBeGreaterThan(0);
    for (const d of allowed)
      expect(d).toEqual({ host: '127.0.0.1', port: server.port, phase: 'agent', address: '127.0.0.1' });
    expect(dataOf(r.events, 'egress.denied')).toEqual([]);
    const [started, completed] = [at('tool.execution.started').seq, at('tool.execution.completed').seq];
    expect(
      r.events.some((e) => e.type === 'egress.allowed' && e.seq > started && e.seq < completed),
      'no egress decision recorded during the call',
    ).toBe(true);
    // What reached the server: requests, and none that was not decided first.
    expect(seen).toBeGreaterThan(0);
    expect(seen).toBeLessThanOrEqual(allowed.length);
  });

  it('without the entry: the server offers nothing, the call is unknown, and nothing reaches the server', () => {
    const [requests, connections] = [server.requests(), server.connections()];
    const r = runWith(undefined);
    expect(r.status, r.stderr).toBe(0);

    const listed = dataOf<{ server: string; transport: string; ok: boolean; tools: unknown[]; error?: string }>(
      r.events,
      'mcp.listed',
    );
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ server: 'every', transport: 'url', ok: false, tools: [] });
    expect(listed[0]!.error).toContain(`127.0.0.1:${server.port} is not reachable`);
    const denied = dataOf<Decision>(r.events, 'egress.denied');
    expect(denied.length).toBeGreaterThan(0);
    for (const d of denied) expect(d).toMatchObject({ host: '127.0.0.1', port: server.port, phase: 'agent' });
    expect(dataOf(r.events, 'egress.allowed')).toEqual([]);

    // The model's call names a tool the run does not have: rejected before the policy, never run.
    const intent = r.events.find((e) => e.type === 'tool.intent')!;
    expect(intent.data).toMatchObject({ tool: 'mcp__every__echo' });
    const call = callEvents(r.events, (intent.data as { callId: string }).callId);
    expect(call.map((e) => e.type)).toEqual(['tool.intent', 'tool.validation', 'tool.observation']);
    expect(call[1]!.data).toMatchObject({ ok: false, stage: 'known', errors: [{ code: 'unknown_tool' }] });
    expect(call[2]!.data).toMatchObject({ tool: 'mcp__every__echo', outcome: 'rejected' });
    expect((call[2]!.data as { content: string }).content).not.toContain('Echo: ');
    expect(r.events.some((e) => e.type === 'tool.execution.started')).toBe(false);

    // Read at the server: not one connection, not one request, though the client did try (denied above).
    expect(server.connections()).toBe(connections);
    expect(server.requests()).toBe(requests);
  });
});
