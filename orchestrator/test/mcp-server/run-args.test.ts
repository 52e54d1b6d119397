import { describe, expect, it } from 'vitest';
import { runArgs } from '../../src/mcp-server/run-args';

describe("runArgs: a run's child command line", () => {
  const spec = {
    task: '--apply',
    repoDir: '/r',
    policyFile: '/p.json',
    stateDir: '/s',
    runId: 'run_1',
    model: 'scripted:/m.json',
  };

  it('puts the task after --, so a task that looks like a flag stays the task; never --apply', () => {
    const args = runArgs(spec);
    expect(args.slice(-2)).toEqual(['--', '--apply']);
    expect(args.slice(0, -2)).not.toContain('--apply');
    expect(args).toEqual(expect.arrayContaining(['--json', '--on-ask', 'pause', '--policy', '/p.json']));
  });

  it("passes the caller's config as --narrow-config and the server's as --config", () => {
    const args = runArgs({ ...spec, config: '/server.json', narrowConfig: '/caller.json' });
    expect(args[args.indexOf('--config') + 1]).toBe('/server.json');
    expect(args[args.indexOf('--narrow-config') + 1]).toBe('/caller.json');
  });

  it("passes --memory and --memory-budget only when the server's settings carry them", () => {
    expect(runArgs(spec)).not.toContain('--memory');
    const on = runArgs({ ...spec, memory: {} });
    expect(on.slice(0, on.indexOf('--'))).toContain('--memory');
    expect(on).not.toContain('--memory-budget');
    const budget = runArgs({ ...spec, memory: { tokenBudget: 50 } });
    expect(budget[budget.indexOf('--memory-budget') + 1]).toBe('50');
    expect(budget.indexOf('--memory-budget')).toBeLessThan(budget.indexOf('--'));
  });
});
