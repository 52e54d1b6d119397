import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpSandbox, type McpSandbox } from '../support/mcp-sandbox';
import { bundleServer } from '../support/mcp-servers';
import { makeRepo } from '../support/sandbox';

/**
 * Red team (issue 17): an MCP rule's path pattern against what real servers in a real sandbox do
 * with the path they are given. Each call here broke a deny rule before the fix:
 *  - server-filesystem rooted at docs/ read `secret/k` as docs/secret/k, past `deny mcp__docs(docs/secret/**)`
 *    (relative paths are now sent absolute: the path the policy decided on);
 *  - a server whose schema lets `path` be anything read `["secrets/k"]`, which no rule saw (refused now);
 *  - server-filesystem opened café/ (NFC) for `cafe\u0301/k` (NFD), past `deny mcp__fs(café/**)`.
 */
const LOOSE_SERVER = String.raw`
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  if (msg.method === 'initialize')
    return send({ id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} },
      serverInfo: { name: 'loose', version: '1.0.0' } } });
  if (msg.method === 'tools/list')
    return send({ id: msg.id, result: { tools: [{ name: 'read', description: 'Reads files.',
      inputSchema: { type: 'object', properties: { path: {} }, required: ['path'] } }] } });
  if (msg.method === 'tools/call') {
    const p = msg.params.arguments.path;
    const text = [p].flat(3).map((f) => readFileSync(String(f), 'utf8')).join('');
    return send({ id: msg.id, result: { content: [{ type: 'text', text }] } });
  }
  send({ id: msg.id, error: { code: -32601, message: 'method not found' } });
});
`;

let m: McpSandbox;

beforeAll(async () => {
  const repo = makeRepo({
    'README.md': '# red team\n',
    'docs/readme.md': 'docs\n',
    'docs/secret/k': 'DOCS-SECRET\n',
    'secrets/k': 'TOP-SECRET\n',
    'caf\u00e9/k': 'CAFE-SECRET\n',
  });
  await bundleServer('filesystem', path.join(repo, 'mcp', 'fs.mjs'));
  writeFileSync(path.join(repo, 'mcp', 'loose.mjs'), LOOSE_SERVER);
  m = await mcpSandbox(repo, {
    docs: { command: 'node', args: ['mcp/fs.mjs', '/workspace/docs'], timeoutMs: 20_000 },
    fs: { command: 'node', args: ['mcp/fs.mjs', '/workspace'], timeoutMs: 20_000 },
    loose: { command: 'node', args: ['mcp/loose.mjs'], timeoutMs: 20_000 },
  });
}, 180_000);

afterAll(async () => m?.driver.close());

const harness = (policy: object) => m.harness(policy);

describe('red team 17: MCP path rules against real servers', () => {
  it('a server rooted below the workspace is sent the absolute path the policy decided on', async () => {
    expect(m.surface).toContain('mcp__docs__read_text_file');
    const h = harness({ deny: ['mcp__docs(docs/secret/**)'] });
    const obs = await h.call('mcp__docs__read_text_file', { path: 'secret/k' });
    expect(obs.content).not.toContain('DOCS-SECRET');
    expect(obs.outcome).toBe('failed');
    expect(obs.content).toMatch(/outside allowed directories: \/workspace\/secret\/k/);
    const started = h.eventsOf(h.lastCallId()).find((e) => e.type === 'tool.execution.started')!.data;
    expect(started).toMatchObject({ input: { arguments: { path: '/workspace/secret/k' } } });
    // The same file by its workspace path meets the rule; an allowed one still reads.
    expect((await h.call('mcp__docs__read_text_file', { path: 'docs/secret/k' })).outcome).toBe('denied');
    const ok = await h.call('mcp__docs__read_text_file', { path: 'docs/readme.md' });
    expect(ok.outcome, ok.content).toBe('ok');
    expect(ok.content).toContain('docs');
  });

  it('a path in a form no rule reads (a list where the schema allows anything) is refused at validation', async () => {
    const h = harness({ deny: ['mcp__loose(secrets/**)'] });
    const obs = await h.call('mcp__loose__read', { path: ['secrets/k'] });
    expect(obs.outcome).toBe('rejected');
    expect(obs.content).not.toContain('TOP-SECRET');
    expect(obs.content).toContain('`path` must be a string');
    expect((await h.call('mcp__loose__read', { path: 'secrets/k' })).outcome).toBe('denied');
    const ok = await h.call('mcp__loose__read', { path: 'README.md' });
    expect(ok.outcome, ok.content).toBe('ok');
    expect(ok.content).toContain('# red team');
  });

  it("a Unicode-equivalent spelling of a denied directory's name is denied too", async () => {
    const h = harness({ deny: ['mcp__fs(caf\u00e9/**)'] });
    const obs = await h.call('mcp__fs__read_text_file', { path: 'cafe\u0301/k' });
    expect(obs.content).not.toContain('CAFE-SECRET');
    expect(obs.outcome).toBe('denied');
  });
});
