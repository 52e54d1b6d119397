import { describe, expect, it } from 'vitest';
import { checkHandoff, Handoff, within, type AgentScope } from '../../src/agents/handoff';
import { narrowPolicy } from '../../src/agents/narrow';
import { compilePolicy, createPolicy, loadShellClassifier, type PolicyRequest } from '../../src/policy/index';

const classifier = await loadShellClassifier();
const parent: AgentScope = {
  runId: 'run_parent',
  lineage: ['run_parent'],
  depth: 0,
  maxDepth: 2,
  surface: ['read_file', 'edit_file', 'bash', 'delegate'],
  paths: ['**'],
  remaining: { turns: 10, toolCalls: 20, tokens: 50_000, seconds: 300 },
  observations: new Set(['obs-1', 'obs-2']),
};
const h = (over: Partial<Handoff> = {}): Handoff =>
  Handoff.parse({
    task: 't',
    tools: ['read_file'],
    paths: ['src/**'],
    evidence: [],
    budget: { turns: 5, toolCalls: 5, tokens: 1000, seconds: 60 },
    expect: 'e',
    ...over,
  });

describe('handoff checks', () => {
  it('accepts a handoff within the parent, refuses each kind of widening with its own code', () => {
    expect(checkHandoff(h(), parent)).toEqual([]);
    const codes = (x: Handoff, scope = parent) => checkHandoff(x, scope).map((e) => `${e.path}:${e.code}`);
    expect(codes(h({ tools: ['read_file', 'write_file'] }))).toEqual(['tools[1]:tool_not_delegable']);
    expect(codes(h({ evidence: ['obs-9'] }))).toEqual(['evidence[0]:unknown_observation']);
    expect(codes(h({ budget: { turns: 11, toolCalls: 21, tokens: 50_001, seconds: 301 } }))).toEqual([
      'budget.turns:budget_exceeds_parent',
      'budget.toolCalls:budget_exceeds_parent',
      'budget.tokens:budget_exceeds_parent',
      'budget.seconds:budget_exceeds_parent',
    ]);
    expect(codes(h(), { ...parent, depth: 2 })).toEqual([':depth_exceeded']);
    expect(codes(h({ paths: ['lib/**'] }), { ...parent, paths: ['src/**'] })).toEqual(['paths[0]:path_outside_scope']);
  });

  it('the schema is strict: a handoff cannot carry a mode, rules or anything else', () => {
    expect(Handoff.safeParse({ ...h(), mode: 'sandboxed-auto' }).success).toBe(false);
    expect(Handoff.safeParse({ ...h(), allow: ['bash(*)'] }).success).toBe(false);
    expect(
      Handoff.safeParse({ ...h(), budget: { turns: 1, toolCalls: 1, tokens: 1, seconds: 1, unlimited: true } }).success,
    ).toBe(false);
  });

  it('within: a child path is inside its parent only if every path it covers is', () => {
    expect(within('src/a.ts', '**')).toBe(true);
    expect(within('src/**', 'src/**')).toBe(true);
    expect(within('src/lib/**', 'src/**')).toBe(true);
    expect(within('./src/../src/a.ts', 'src/**')).toBe(true);
    expect(within('src2/a.ts', 'src/**')).toBe(false);
    expect(within('src/**', 'src/a.ts')).toBe(false);
    expect(within('../x/**', '**')).toBe(false);
    expect(within('**', 'src/**')).toBe(false);
  });
});

describe('narrowed policy', () => {
  const base = createPolicy(
    compilePolicy({ deny: ['bash(git push*)', 'read_file(**/.env)'] }, 't', classifier),
    'sandboxed-auto',
    classifier,
  );
  const child = narrowPolicy(base, ['src/**']);
  const req = (tool: string, input: unknown, readOnly: boolean): PolicyRequest => ({
    tool,
    input,
    readOnly,
    sideEffect: readOnly ? 'read' : tool === 'bash' ? 'execute' : 'write',
  });

  it('inherits every deny and the mode, and denies paths outside the handoff', () => {
    expect(child.mode).toBe('sandboxed-auto');
    expect(child.decide(req('bash', { command: 'git push' }, false)).decision).toBe('deny');
    expect(child.decide(req('read_file', { path: 'src/.env' }, true)).decision).toBe('deny');
    expect(child.decide(req('edit_file', { path: 'src/a.ts' }, false)).decision).toBe('allow');
    expect(child.decide(req('edit_file', { path: 'lib/a.ts' }, false))).toMatchObject({
      decision: 'deny',
      policyId: 'handoff:paths',
    });
    expect(child.decide(req('edit_file', { path: 'src/../lib/a.ts' }, false)).decision).toBe('deny');
    expect(child.decide(req('read_file', { path: '/etc/passwd' }, true)).decision).toBe('deny');
  });

  it('narrowing twice only narrows further', () => {
    const grandchild = narrowPolicy(child, ['src/a/**']);
    expect(grandchild.decide(req('edit_file', { path: 'src/a/x.ts' }, false)).decision).toBe('allow');
    expect(grandchild.decide(req('edit_file', { path: 'src/b/x.ts' }, false)).decision).toBe('deny');
    // Even a grandchild handed a wider path than its parent had cannot use it.
    expect(narrowPolicy(child, ['**']).decide(req('edit_file', { path: 'lib/x.ts' }, false)).decision).toBe('deny');
  });
});
