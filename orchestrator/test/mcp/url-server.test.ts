import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { listMcpTools } from '../../src/mcp/mcp-servers';
import { loopbackMcpServer, urlServerPorts } from './url-ports';

/**
 * A streamable HTTP MCP server (the SDK's own server, on loopback) reached only as the run's
 * `egress.agent` allows: each request decided and recorded like the egress proxy's decisions.
 */
let port: number;
let requests = 0;

let close: () => Promise<void>;
beforeAll(async () => {
  ({ port, close } = await loopbackMcpServer(
    (mcp) =>
      mcp.registerTool(
        'shout',
        { description: 'Upper-cases text.', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
        ({ text }) => ({ content: [{ type: 'text', text: text.toUpperCase() }] }),
      ),
    () => requests++,
  ));
});

afterAll(() => close());

const setup = urlServerPorts;

describe('a URL server is reached only through the agent allowlist', () => {
  it('allowed: listed, called, and every request recorded as egress.allowed with the address used', async () => {
    const { ports, log, events } = setup([`127.0.0.1:${port}`]);
    const tools = await listMcpTools({ servers: { remote: { url: `http://127.0.0.1:${port}/mcp` } }, ports, log });
    expect(tools.map((t) => t.name)).toEqual(['mcp__remote__shout']);
    const tool = tools[0]!;
    expect(tool.sideEffect).toBe('network');
    const plan = tool.plan({ text: 'hi' } as never, {} as never);
    if (plan.executor !== 'orchestrator') throw new Error('expected an orchestrator plan');
    const result = await plan.run({ readArtifact: () => ({}) as never, approval: { id: 'evt', by: 'policy' } });
    expect(result).toEqual({ ok: true, output: 'HI' });
    const allowed = events.filter((e) => e.type === 'egress.allowed');
    expect(allowed.length).toBeGreaterThan(0);
    for (const e of allowed)
      expect(e.data).toMatchObject({ host: '127.0.0.1', port, phase: 'agent', address: '127.0.0.1' });
    expect(events.some((e) => e.type === 'egress.denied')).toBe(false);
  });

  it('not on the list: nothing is sent, the server offers nothing, and the refusal is recorded', async () => {
    const before = requests;
    const { ports, log, events } = setup([`127.0.0.1:${port + 1}`]);
    const tools = await listMcpTools({ servers: { remote: { url: `http://127.0.0.1:${port}/mcp` } }, ports, log });
    expect(tools).toEqual([]);
    expect(requests).toBe(before);
    const listed = events.find((e) => e.type === 'mcp.listed')!.data;
    expect(listed).toMatchObject({ server: 'remote', transport: 'url', ok: false });
    expect(String(listed.error)).toMatch(/127\.0\.0\.1:\d+ is not reachable: address not on the allowlist/);
    expect(events).toContainEqual({
      type: 'egress.denied',
      data: expect.objectContaining({ host: '127.0.0.1', port, phase: 'agent' }) as unknown,
    });
  });

  it('a name that resolves to loopback is refused unless the address is listed; deny wins', async () => {
    const before = requests;
    const byName = setup([`localhost:${port}`]);
    expect(await listMcpTools({ servers: { r: { url: `http://localhost:${port}/mcp` } }, ...byName })).toEqual([]);
    expect(JSON.stringify(byName.events)).toMatch(/resolves to a loopback address/);
    const denied = setup([`127.0.0.1:${port}`], ['127.0.0.1']);
    expect(await listMcpTools({ servers: { r: { url: `http://127.0.0.1:${port}/mcp` } }, ...denied })).toEqual([]);
    expect(JSON.stringify(denied.events)).toMatch(/on the deny list/);
    expect(requests).toBe(before);
  });
});
