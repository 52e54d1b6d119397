import { describe, expect, it } from 'vitest';
import type { Handoff } from '../../src/agents/handoff';
import type { CallResult, Observation } from '../../src/tools/pipeline';
import { ALL_TOOLS, handoff, parentRun, REPO, type Parent } from './delegation-harness';

function observed(result: CallResult): Observation {
  if (result.kind === 'pending') throw new Error(`${result.callId} waits for approval ${result.requestId}`);
  return result.observation;
}

/** The codes the last `tool.validation` of the parent refused with. */
const refusedWith = (p: Parent) =>
  p
    .data('tool.validation')
    .at(-1)
    ?.errors?.map((e) => e.code);

/** A child that rewrites `src/a.ts` (inside its paths) and runs `make`, whose build also writes README.md (outside). */
const writesInsideAndOutside = {
  turns: [
    { toolCalls: [{ name: 'read_file', input: { path: 'src/a.ts' } }] },
    { toolCalls: [{ name: 'write_file', input: { path: 'src/a.ts', content: 'export const a = 2;\n' } }] },
    { toolCalls: [{ name: 'bash', input: { command: 'make' } }] },
    { final: 'a is 2 now (obs-2)' },
  ],
};
const make = {
  exec: ({ command, workspace }: { command: string; workspace: { write(p: string, c: string): void } }) => {
    if (command !== 'make') return { exitCode: 127, output: `${command}: not here\n` };
    workspace.write('README.md', '# rebuilt by make\n');
    return { exitCode: 0, output: 'built\n' };
  },
};

describe('delegation: a handoff can narrow, never widen', () => {
  const cases: [string, Parameters<typeof parentRun>[0], Partial<Handoff>, string][] = [
    ['a tool the parent lacks', { surface: ALL_TOOLS.filter((t) => t !== 'bash') }, {}, 'tool_not_delegable'],
    ['a path outside the parent', { paths: ['src/**'], depth: 1 }, { paths: ['docs/**'] }, 'path_outside_scope'],
    [
      'more budget than is left',
      { budgets: { maxTurns: 4 } },
      { budget: { turns: 5, toolCalls: 1, tokens: 1, seconds: 1 } },
      'budget_exceeds_parent',
    ],
    ['a level deeper than allowed', { depth: 2, maxDepth: 2 }, {}, 'depth_exceeded'],
  ];

  it.each(cases)('%s: the call is rejected and no child is started', async (_name, parent, over, code) => {
    const p = parentRun({ ...parent, children: [writesInsideAndOutside] });
    const obs = observed(await p.delegate(handoff(over)));
    expect(obs.outcome).toBe('rejected');
    expect(refusedWith(p)).toEqual([code]);
    expect(p.data('agent.spawned')).toEqual([]);
    expect(p.children).toEqual([]);
    expect(p.sandbox.workspace.files.get('src/a.ts')).toBe(REPO['src/a.ts']);
  });
});

describe('delegation: parallel children share the parent budget', () => {
  it('two children that each fit, but not together: the second is refused before it starts', async () => {
    const p = parentRun({ budgets: { maxTurns: 20 }, children: [{ turns: [{ final: 'one' }] }] });
    const twelve = handoff({ budget: { turns: 12, toolCalls: 5, tokens: 1000, seconds: 60 } });
    // As the loop runs consecutive delegate calls: at once, each checked against the same remainder.
    const [first, second] = await Promise.all([p.delegator.run(twelve, 'call_a'), p.delegator.run(twelve, 'call_b')]);
    expect(first).toMatchObject({ ok: true });
    expect(second).toMatchObject({ ok: false, error: { code: 'budget_exceeds_parent' } });
    expect(second.error?.message).toContain('once its other sub-agents');
    expect(p.data('agent.spawned').map((s) => s.callId)).toEqual(['call_a']);
    expect(p.children).toHaveLength(1);
  });
});

describe("delegation: a child's result", () => {
  it('changes outside its paths are withheld: never applied to the parent, and on record', async () => {
    const p = parentRun({ children: [writesInsideAndOutside], ...make });
    const obs = observed(await p.delegate(handoff(), 'call_d'));
    // The child did change README.md in its own workspace…
    expect(p.children[0]!.workspace.files.get('README.md')).toBe('# rebuilt by make\n');
    // …but it is not the parent's.
    expect(p.sandbox.workspace.files.get('README.md')).toBe(REPO['README.md']);
    expect(p.log.events().some((e) => (e.data as { callId?: string }).callId?.startsWith('call_d.rm'))).toBe(false);
    const [completed] = p.data('agent.completed');
    expect(completed).toMatchObject({ callId: 'call_d', withheld: ['README.md'] });
    expect(completed!.filesChanged).toEqual(['README.md', 'src/a.ts']);
    expect(obs.content).toContain('withheld (outside its paths, not applied): README.md');
  });

  it(
    "folds back into the parent: its files through the parent's write path, " + 'its answer as the observation',
    async () => {
      const p = parentRun({ children: [writesInsideAndOutside], ...make });
      const obs = observed(await p.delegate(handoff(), 'call_d'));
      expect(obs.outcome).toBe('ok');
      expect(p.sandbox.workspace.files.get('src/a.ts')).toBe('export const a = 2;\n');
      // Applied by the parent's own pipeline: a read then a write_file, each decided and observed in the parent's log.
      const write = p.data('tool.intent').find((d) => d.callId === 'call_d.write1');
      expect(write).toMatchObject({ tool: 'write_file', input: { path: 'src/a.ts' } });
      const written = p.data('tool.observation').find((d) => d.callId === 'call_d.write1')!;
      expect(written.outcome).toBe('ok');
      const [spawned] = p.data('agent.spawned');
      expect(obs.content).toContain(`sub-agent ${spawned!.childRunId} (depth 1) ended final`);
      expect(obs.content).toContain('answer: a is 2 now (obs-2)');
      expect(obs.content).toContain(`src/a.ts ok (${written.observationId})`);
      expect(p.data('agent.completed')[0]).toMatchObject({ childRunId: spawned!.childRunId, status: 'final' });
      // The child's own log holds its run, tied to the parent.
      const child = p.childEvents(spawned!.childRunId);
      expect(child.every((e) => e.parentRunId === p.runId)).toBe(true);
      expect(child.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
    },
  );
});
