import { describe, expect, it } from 'vitest';
import {
  compilePolicy,
  createPolicy,
  loadShellClassifier,
  type Mode,
  type PolicyRequest,
  type ToolHints,
} from '../../src/policy/index';
import { mcpPathSubjects, mcpToolName, parseMcpName } from '../../src/policy/mcp-names';

const classifier = await loadShellClassifier();
const policy = (file: unknown, mode: Mode = 'confirm-novel', mcpServers?: string[]) =>
  createPolicy(compilePolicy(file, 'test.json', classifier, mcpServers ? { mcpServers } : {}), mode, classifier);
const mcp = (tool: string, input: object, hints?: ToolHints, network = false): PolicyRequest => ({
  tool,
  input,
  readOnly: false,
  sideEffect: network ? 'network' : 'execute',
  ...(hints ? { hints } : {}),
});

describe('MCP tool names', () => {
  it('map a server tool to mcp__SERVER__TOOL and read back one way only', () => {
    expect(mcpToolName('fs', 'write_file')).toBe('mcp__fs__write_file');
    expect(mcpToolName('everything', 'get-tiny-image')).toBe('mcp__everything__get_tiny_image');
    expect(mcpToolName('git_hub', 'createIssue')).toBe('mcp__git_hub__createissue');
    expect(mcpToolName('fs', 'x'.repeat(60))).toBeUndefined();
    expect(parseMcpName('mcp__git_hub__create__issue')).toEqual({ server: 'git_hub', tool: 'create__issue' });
    expect(parseMcpName('mcp__fs')).toEqual({ server: 'fs' });
    expect(parseMcpName('mcp_fs')).toBeUndefined();
  });

  it("a call's path subjects are its path, source, destination and paths, as workspace keys", () => {
    expect(
      mcpPathSubjects({ path: '/workspace/src/a.ts', source: './b', destination: 'c/../d', paths: ['e', 1], x: 'f' }),
    ).toEqual(['src/a.ts', 'b', 'd', 'e']);
  });
});

describe('MCP rules in the policy language', () => {
  it('are parsed, and their inline examples checked at load like any path rule', () => {
    expect(() =>
      policy({
        allow: [{ rule: 'mcp__fs__write_file(src/**)', match: ['/workspace/src/a.ts'], notMatch: ['secrets/k'] }],
        deny: ['mcp__fs(secrets/**)', 'mcp__everything'],
      }),
    ).not.toThrow();
    expect(() => policy({ deny: [{ rule: 'mcp__fs__write_file(src/**)', match: ['lib/a.ts'] }] })).toThrow(
      /deny\[0\]\.match\[0\].*"lib\/a\.ts" is expected to match, but it does not/,
    );
    expect(() => policy({ deny: [{ rule: 'mcp__fs', match: ['a'] }] })).toThrow(/examples need a pattern/);
  });

  it('refuse a server the config does not declare, with the closest name', () => {
    expect(() => policy({ deny: ['mcp__fss__read_file'] }, 'confirm-novel', ['fs', 'everything'])).toThrow(
      /no MCP server `fss` in the config; did you mean fs\?/,
    );
    expect(() => policy({ deny: ['mcp_fs'] })).toThrow(/an MCP rule is mcp__SERVER or mcp__SERVER__TOOL/);
  });

  it('deny and ask catch a call if any path matches; allow covers it only if every path does', () => {
    const p = policy({ allow: ['mcp__fs__move_file(src/**)'], deny: ['mcp__fs(secrets/**)'] }, 'confirm-each');
    expect(p.decide(mcp('mcp__fs__move_file', { source: 'src/a', destination: 'src/b' })).decision).toBe('allow');
    expect(p.decide(mcp('mcp__fs__move_file', { source: 'src/a', destination: 'lib/b' })).decision).toBe('ask');
    const d = p.decide(mcp('mcp__fs__move_file', { source: 'src/a', destination: '/workspace/secrets/k' }));
    expect(d.decision).toBe('deny');
    expect(d.policyId).toBe('deny[0] mcp__fs(secrets/**)');
    expect(p.decide(mcp('mcp__fs__read_multiple_files', { paths: ['src/a', 'secrets/x'] })).decision).toBe('deny');
  });

  it('a whole-server rule covers each of its tools, and deny wins over allow', () => {
    const p = policy({ allow: ['mcp__everything'], deny: ['mcp__everything__get_env'] }, 'confirm-each');
    expect(p.decide(mcp('mcp__everything__echo', { message: 'x' })).decision).toBe('allow');
    expect(p.decide(mcp('mcp__everything__get_env', {})).decision).toBe('deny');
  });

  it('annotations only make the mode stricter: readOnlyHint never allows, destructiveHint always asks', () => {
    // readOnlyHint is not even passed as a hint: an MCP call is never decided as a read.
    expect(policy({}, 'confirm-each').decide(mcp('mcp__fs__read_file', { path: 'a' })).decision).toBe('ask');
    expect(policy({}, 'read-only').decide(mcp('mcp__fs__read_file', { path: 'a' })).decision).toBe('deny');
    const novel = policy({}, 'confirm-novel');
    const plain = mcp('mcp__fs__write_file', { path: 'src/a' });
    const shape = novel.decide(plain).shape;
    expect(novel.decide(plain, { approvedShapes: new Set([shape]) }).decision).toBe('allow');
    const destructive = mcp('mcp__fs__write_file', { path: 'src/a' }, { destructive: true });
    const d = novel.decide(destructive, { approvedShapes: new Set([shape]) });
    expect(d.decision).toBe('ask');
    expect(d.risk.join('\n')).toMatch(/destructiveHint/);
    const auto = policy({}, 'sandboxed-auto');
    expect(auto.decide(plain).decision).toBe('allow');
    expect(auto.decide(mcp('mcp__fs__fetch', {}, { openWorld: true })).decision).toBe('ask');
    // A URL server's tool is network: asked even in sandboxed-auto unless a rule allows it.
    expect(auto.decide(mcp('mcp__remote__echo', {}, undefined, true)).decision).toBe('ask');
    expect(
      policy({ allow: ['mcp__remote'] }, 'sandboxed-auto').decide(mcp('mcp__remote__echo', {}, undefined, true))
        .decision,
    ).toBe('allow');
  });

  it('a path under .git/ asks unless denied', () => {
    const d = policy({}, 'sandboxed-auto').decide(mcp('mcp__fs__write_file', { path: '.git/hooks/pre-commit' }));
    expect(d.decision).toBe('ask');
    expect(d.policyId).toBe('gatehouse:git-dir');
  });
});
