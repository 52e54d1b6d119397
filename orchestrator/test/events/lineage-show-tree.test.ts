import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildTree } from '../../src/events/lineage';
import { treeCommand } from '../../src/cli/tree';
import { tempStateDir } from './helpers';
import { leaf, root } from './lineage-harness';

describe('gatehouse show --tree', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
    return { out, err };
  };

  it('prints one indented block per agent and exits 0 when the logs agree; --json prints the tree', () => {
    const state = tempStateDir();
    root(state, [{ runId: 'run_b' }]);
    leaf(state, 'run_root', 'run_b', 'call_1_0', 1, ['run_root', 'run_b']);
    const text = capture();
    expect(treeCommand('run_root', state, false)).toBe(0);
    const lines = text.out.join('').split('\n');
    expect(lines[0]).toBe('● run_root  final (final_answer)  depth 0');
    expect(lines).toContain('   call_0_0  bash {"command":"make"} → ok; allowed by alice via cli (once)');
    expect(lines).toContain('   approval req_1 (bash): granted by alice via cli');
    expect(lines).toContain('  └─ run_b  final (final_answer)  depth 1');
    expect(lines).toContain('     call_0_0  list_files {"path":"."} → ok; allowed by builtin:read-only');
    expect(lines.at(-2)).toBe('2 agent(s); the logs agree');
    expect(text.err).toEqual([]);
    vi.restoreAllMocks();

    const json = capture();
    expect(treeCommand('run_root', state, true)).toBe(0);
    expect(JSON.parse(json.out.join(''))).toEqual(buildTree(state, 'run_root'));
  });

  it('exits 1 and prints the problems when a log disagrees', () => {
    const state = tempStateDir();
    root(state, [{ runId: 'run_gone' }]);
    const text = capture();
    expect(treeCommand('run_root', state, false)).toBe(1);
    expect(text.out.join('')).toContain('PROBLEM: child log unreadable: run run_gone not found');
    expect(text.err.join('')).toContain('gatehouse: run_gone: child log unreadable');
  });
});
