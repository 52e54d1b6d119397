import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { policyChecker, type Checker } from '../../src/cli/policy';

/** The risk lines of a decided call (the test fails on an undecided one). */
function riskOf(r: ReturnType<Checker['decide']>): string[] {
  if (!r.ok) throw new Error(r.error);
  return r.json.risk as string[];
}

/** What is wrong with a call, or '' when it was decided. */
function errorOf(r: ReturnType<Checker['decide']>): string {
  return r.ok ? '' : r.error;
}

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');

/**
 * `gatehouse policy check` on MCP tools (issue 17): `mcp__SERVER__TOOL` is decided by the run's own
 * gate code, with MCP rules (`mcp__fs__write_file(src/**)`, `mcp__fs`), the server's transport from
 * the config, and annotations that can only make a decision stricter.
 */
describe('policy check on MCP tools', () => {
  function repo(policy?: unknown, config?: unknown): string {
    const d = mkdtempSync(path.join(os.tmpdir(), 'gh-check-mcp-'));
    mkdirSync(path.join(d, '.gatehouse'));
    if (policy !== undefined) writeFileSync(path.join(d, '.gatehouse', 'policy.json'), JSON.stringify(policy));
    if (config !== undefined) writeFileSync(path.join(d, 'trusted.json'), JSON.stringify(config));
    return d;
  }
  const trusted = (rules: unknown, mcp?: unknown): string => {
    const d = repo(undefined, { ...(mcp ? { mcp } : {}), policy: rules });
    return d;
  };
  const fsServer = { fs: { command: 'mcp-server-filesystem', args: ['/workspace'] } };

  it('a tool rule with a path pattern allows inside it and leaves the rest to the mode', async () => {
    const d = trusted({ allow: ['mcp__fs__write_file(src/**)'], deny: ['mcp__fs(secrets/**)'] }, fsServer);
    const checker = await policyChecker({ repo: d, config: path.join(d, 'trusted.json') });
    const inside = checker.decide('mcp__fs__write_file', { path: '/workspace/src/a.ts', content: 'x' });
    expect(inside).toMatchObject({
      ok: true,
      json: {
        decision: 'allow',
        rule: 'allow[0] mcp__fs__write_file(src/**)',
        mcp: { server: 'fs', transport: 'stdio', declared: true },
      },
    });
    const outside = checker.decide('mcp__fs__write_file', { path: 'lib/a.ts', content: 'x' });
    expect(outside).toMatchObject({ ok: true, json: { decision: 'ask', mode: 'confirm-novel' } });
    // A server rule covers every tool of the server.
    const secret = checker.decide('mcp__fs__read_file', { path: 'secrets/key' });
    expect(secret).toMatchObject({ ok: true, json: { decision: 'deny', rule: 'deny[0] mcp__fs(secrets/**)' } });
  });

  it('annotations only make it stricter: readOnlyHint allows nothing, openWorldHint makes it ask', async () => {
    const d = trusted({}, fsServer);
    const novel = await policyChecker({ repo: d, config: path.join(d, 'trusted.json') });
    const call = { path: 'a' };
    expect(novel.decide('mcp__fs__write_file', call)).toMatchObject({ ok: true, json: { decision: 'ask' } });
    // The server's claim that the tool only reads does not make the mode allow it.
    expect(novel.decide('mcp__fs__write_file', call, { annotations: { readOnlyHint: true } })).toMatchObject({
      ok: true,
      json: { decision: 'ask' },
    });
    const auto = await policyChecker({ repo: d, config: path.join(d, 'trusted.json'), mode: 'sandboxed-auto' });
    expect(auto.decide('mcp__fs__write_file', call)).toMatchObject({ ok: true, json: { decision: 'allow' } });
    const openWorld = auto.decide('mcp__fs__write_file', call, { annotations: { openWorldHint: true } });
    expect(openWorld).toMatchObject({ ok: true, json: { decision: 'ask' } });
    expect(riskOf(openWorld)).toContain('annotation: openWorldHint (the server says it reaches outside)');
  });

  it("a URL server's tool is network, as in a run; an undeclared server or a bad input is an error", async () => {
    const d = trusted({}, { api: { url: 'https://mcp.example.test/mcp' } });
    const checker = await policyChecker({ repo: d, config: path.join(d, 'trusted.json') });
    const net = checker.decide('mcp__api__search', { q: 'x' });
    expect(net).toMatchObject({ ok: true, json: { mcp: { transport: 'url' } } });
    expect(riskOf(net)[0]).toBe('network: mcp__api__search');
    expect(errorOf(checker.decide('mcp__fs__read_file', { path: 'a' }))).toMatch(
      /declares no MCP server fs \(it declares api\)/,
    );
    expect(errorOf(checker.decide('mcp__api', {}))).toMatch(/whole server/);
    const schema = { type: 'object', properties: { q: { type: 'string' } } };
    expect(errorOf(checker.decide('mcp__api__search', { q: 1 }, { inputSchema: schema }))).toMatch(
      /does not fit the tool's input schema/,
    );
    expect(errorOf(checker.decide('mcp__api__search', { q: 'x' }, { inputSchema: schema }))).toBe('');
    expect(errorOf(checker.decide('bash', { command: 'ls' }, { annotations: {} }))).toMatch(/are for MCP tools/);
  });

  it("the repository's own policy takes its deny rules for MCP tools, with no config at all", async () => {
    const d = repo({ deny: ['mcp__fs__write_file(.github/**)'], allow: ['mcp__fs'] });
    const checker = await policyChecker({ repo: d });
    expect(checker.decide('mcp__fs__write_file', { path: '.github/workflows/ci.yml' })).toMatchObject({
      ok: true,
      json: { decision: 'deny', mcp: { server: 'fs', transport: 'stdio', declared: false } },
    });
    // Its allow rule is not taken (docs/policy.md): the mode decides.
    expect(checker.decide('mcp__fs__read_file', { path: 'a' })).toMatchObject({ ok: true, json: { decision: 'ask' } });
  });

  describe('through the CLI', () => {
    beforeAll(() => {
      execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
    });

    it('--tool mcp__fs__write_file --input … --annotations … prints the decision', () => {
      const d = trusted({ allow: ['mcp__fs__write_file(src/**)'] }, fsServer);
      const check = (extra: string[]) =>
        spawnSync(
          process.execPath,
          [cli, 'policy', 'check', '--repo', d, '--config', path.join(d, 'trusted.json'), ...extra],
          { encoding: 'utf8', timeout: 60_000 },
        );
      const input = ['--tool', 'mcp__fs__write_file', '--input', '{"path":"src/a.ts","content":"x"}'];
      const allowed = check(input);
      expect(allowed.status, allowed.stderr).toBe(0);
      expect(JSON.parse(allowed.stdout)).toMatchObject({ decision: 'allow', mcp: { server: 'fs' } });
      const bad = check([...input, '--annotations', '{"readOnly":true}']);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toMatch(/--annotations: unknown key "readOnly"; the keys are readOnlyHint/);
    });
  });
});
