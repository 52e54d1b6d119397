import { describe, expect, it } from 'vitest';
import { childrenUsage } from '../../src/usage/tree-usage';
import { handoff, parentRun } from './delegation-harness';

/** 4000 characters are 1000 output tokens: $1 at $1000 per million output tokens (input is free). */
const PRICE = { input: 0, output: 1000 };
const costly = {
  turns: [
    { text: 'x'.repeat(4000), toolCalls: [{ name: 'read_file', input: { path: 'src/a.ts' } }] },
    { final: 'a is 1 (obs-1)' },
  ],
};

describe('delegation: the cost budget', () => {
  it('a child may spend what its parent has left; the parent counts what the child spent', async () => {
    const p = parentRun({ budgets: { maxCostUsd: 3 }, price: PRICE, children: [costly, costly] });
    expect(await p.delegator.run(handoff(), 'call_a')).toMatchObject({ ok: true });
    const [first] = p.data('agent.spawned');
    const child = p.childEvents(first!.childRunId);
    const started = child.find((e) => e.type === 'run.started');
    expect(started?.type === 'run.started' && started.data.budgets?.maxCostUsd).toBe(3);
    const costs = child.flatMap((e) => (e.type === 'model.output' ? [e.data.usage.costUsd] : []));
    expect(costs).toHaveLength(2);
    const spent = childrenUsage(p.stateDir, p.runId, p.log.events());
    expect(spent.costUsd).toBeCloseTo((costs[0] ?? 0) + (costs[1] ?? 0), 8);
    expect(spent.costUsd).toBeGreaterThan(1);

    // The second child is handed only what is left.
    expect(await p.delegator.run(handoff(), 'call_b')).toMatchObject({ ok: true });
    const second = p.data('agent.spawned')[1]!;
    const s2 = p.childEvents(second.childRunId).find((e) => e.type === 'run.started');
    expect(s2?.type === 'run.started' && s2.data.budgets?.maxCostUsd).toBeCloseTo(3 - spent.costUsd, 8);
  });

  it('with the cost budget spent, no sub-agent is started', async () => {
    const p = parentRun({ budgets: { maxCostUsd: 1 }, price: PRICE, children: [costly, costly] });
    await p.delegator.run(handoff(), 'call_a');
    const refused = await p.delegate(handoff());
    expect(refused.kind === 'observed' && refused.observation.outcome).toBe('rejected');
    expect(
      p
        .data('tool.validation')
        .at(-1)
        ?.errors?.map((e) => e.message),
    ).toEqual(['this agent has spent its cost budget; no sub-agent can be paid for']);
    expect(p.data('agent.spawned')).toHaveLength(1);
  });
});
