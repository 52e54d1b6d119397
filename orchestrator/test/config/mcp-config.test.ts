import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors';
import { loadProjectConfig } from '../../src/config/load';
import { runRedactor } from '../../src/run/run-redactor';
import { repoWith, trustedFile } from './helpers';

function problemsOf(config: unknown): string[] {
  try {
    loadProjectConfig({ repoDir: repoWith(), configFile: trustedFile(config) });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems.map((p) => `${p.path}: ${p.message}`);
  }
  throw new Error('the config was accepted');
}

describe('the config declares MCP servers (docs/mcp.md)', () => {
  it('takes stdio and URL servers from the trusted config', () => {
    const mcp = {
      fs: { command: 'node', args: ['node_modules/x/index.js', '/workspace'], env: { A: 'b' } },
      remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer t0ken-value' }, timeoutMs: 5000 },
    };
    const c = loadProjectConfig({ repoDir: repoWith(), configFile: trustedFile({ mcp }) });
    expect(c.mcp).toEqual(mcp);
  });

  it('refuses names that cannot be part of a tool name, each problem at its place', () => {
    const problems = problemsOf({ mcp: { 'My-FS': { command: 'node' }, a__b: { command: 'node' } } });
    expect(problems).toHaveLength(2);
    for (const p of problems) expect(p).toMatch(/^mcp\.(My-FS|a__b): an MCP server name is lower-case/);
  });

  it('refuses bad entries with what was expected', () => {
    expect(problemsOf({ mcp: { fs: { command: '' } } })).toEqual([
      'mcp.fs.command: the command cannot be empty, got ""',
    ]);
    expect(problemsOf({ mcp: { fs: { command: 'node', argz: [] } } }).join('\n')).toMatch(/argz/);
    expect(problemsOf({ mcp: { fs: { command: 'node', timeoutMs: 10 } } }).join('\n')).toMatch(
      /timeoutMs: expected milliseconds/,
    );
    expect(problemsOf({ mcp: { fs: 'node server.js' } }).join('\n')).toMatch(/^mcp\.fs: expected an object/);
    expect(problemsOf({ mcp: { fs: { command: 'node', url: 'https://a.example/' } } })).toEqual([
      'mcp.fs: give either "command" (a stdio server) or "url" (streamable HTTP) (the value is not shown)',
    ]);
    expect(problemsOf({ mcp: { fs: { url: 'https://a.example/', env: {} } } })).toEqual([
      'mcp.fs.env: only a stdio server takes "env" (the value is not shown)',
    ]);
    expect(problemsOf({ mcp: { fs: { comand: 'node' } } })).toContain(
      'mcp.fs.comand: unknown key; did you mean command?',
    );
  });

  it('never shows an env value, a header value or a URL in a message', () => {
    const secret = 'sk-live-0123456789abcdef';
    const problems = problemsOf({
      mcp: {
        a: { command: 'node', env: { TOKEN: 12345678901, OTHER: { nested: secret } } },
        b: { url: `https://user:${secret}@mcp.example.com/` },
        c: { url: 'https://mcp.example.com/', headers: { Authorization: `Bearer\n${secret}` } },
        d: { url: `ftp://mcp.example.com/${secret}` },
      },
    });
    expect(problems.length).toBeGreaterThanOrEqual(4);
    const text = problems.join('\n');
    expect(text).not.toContain(secret);
    expect(text).not.toContain('12345678901');
    expect(text).toMatch(/mcp\.b\.url: a URL with a user or password is refused/);
    expect(text).toMatch(/mcp\.d\.url: only http:\/\/ and https:\/\//);
  });

  it("does not take a repository's servers: it lists them as ignored", () => {
    const repo = repoWith({ mcp: { evil: { command: 'bash', args: ['-c', 'curl x'] } } });
    const c = loadProjectConfig({ repoDir: repo });
    expect(c.mcp).toBeUndefined();
    expect(c.ignored).toContain('mcp.evil (only the trusted config declares MCP servers)');
  });

  it('redacts header values and credential-named env values from the log, not every short value', () => {
    const c = loadProjectConfig({
      repoDir: repoWith(),
      configFile: trustedFile({
        mcp: {
          fs: { command: 'node', env: { API_TOKEN: 'tok-aaaabbbbcccc', ROOT: '/workspace/src' } },
          r: { url: 'https://mcp.example.com/', headers: { 'X-Api': 'hdr-ddddeeeeffff' } },
        },
      }),
    });
    const r = runRedactor({ projectConfig: c });
    const out = r.redact('tok-aaaabbbbcccc hdr-ddddeeeeffff /workspace/src');
    expect(out).not.toContain('tok-aaaabbbbcccc');
    expect(out).not.toContain('hdr-ddddeeeeffff');
    expect(out).toContain('/workspace/src');
  });
});
