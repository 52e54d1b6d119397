import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODING_TOOLS, type Sandbox, type SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, startDriver } from '../support/sandbox';
import { pipelineFor, RAN } from '../support/pipeline';

const names = CODING_TOOLS.map((t) => t.name);

const path = fc.oneof(
  fc.constantFrom('README.md', 'src/a.ts', 'src', 'new.txt', '../../etc/passwd', '/etc/shadow', ''),
  fc.string({ maxLength: 20 }),
);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
/** Inputs shaped for each tool, with values that are sometimes valid and sometimes not. */
const shaped = fc.oneof(
  fc.record({
    tool: fc.constant('read_file'),
    input: fc.record({
      path,
      offset: maybe(fc.integer({ min: -2, max: 5 })),
      limit: maybe(fc.integer({ min: -1, max: 3 })),
    }),
  }),
  fc.record({ tool: fc.constant('write_file'), input: fc.record({ path, content: fc.string({ maxLength: 50 }) }) }),
  fc.record({
    tool: fc.constant('edit_file'),
    input: fc.record({ path, oldText: fc.constantFrom('a', '# x', '', 'zz'), newText: fc.string({ maxLength: 20 }) }),
  }),
  fc.record({ tool: fc.constant('list_files'), input: fc.record({ path: maybe(path) }) }),
  fc.record({
    tool: fc.constant('glob'),
    input: fc.record({ pattern: fc.oneof(fc.constantFrom('**/*', '*.md', '['), fc.string({ maxLength: 10 })) }),
  }),
  fc.record({
    tool: fc.constant('grep'),
    input: fc.record({
      pattern: fc.oneof(fc.constantFrom('x', '(', 'a|b'), fc.string({ maxLength: 10 })),
      path: maybe(path),
    }),
  }),
  fc.record({
    tool: fc.constant('bash'),
    input: fc.record({
      command: fc.constantFrom('true', 'echo hi', 'exit 7', 'cat README.md', 'ls /', 'sleep 5'),
      timeout: maybe(fc.oneof(fc.integer({ min: -5, max: 3000 }), fc.double())),
    }),
  }),
  fc.record({
    tool: fc.constant('git_status'),
    input: fc.oneof(fc.constant({}), fc.record({ verbose: fc.boolean() })),
  }),
  fc.record({ tool: fc.constant('git_diff'), input: fc.record({ path: maybe(path) }) }),
  fc.record({
    tool: fc.constant('read_artifact'),
    input: fc.record({
      ref: fc.oneof(fc.constant('art-0000000000000000'), fc.string({ maxLength: 20 })),
      offset: maybe(fc.integer()),
    }),
  }),
);
/** What a confused or hostile model might send: wrong names, non-objects, non-JSON values. */
const random = fc.record({
  tool: fc.oneof(
    fc.constantFrom(...names),
    fc.constantFrom('', 'Bash', 'read-file', '__proto__', 'constructor'),
    fc.string(),
    fc.anything(),
  ),
  input: fc.anything(),
});
const intent = fc.oneof(shaped, random);

describe('pipeline property: any intent', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({
      runId: 'run_property',
      repoDir: makeRepo({ 'README.md': '# x\n', 'src/a.ts': 'a\n' }),
    });
  });
  afterAll(async () => driver?.close());

  it('never crashes, never executes when invalid or not allowed, and ends in exactly one observation', async () => {
    const h = pipelineFor(sandbox, { limits: { defaultTimeoutMs: 2000, maxTimeoutMs: 2000 } });
    const seen = { executed: 0, rejected: 0 };
    await fc.assert(
      fc.asyncProperty(intent, async ({ tool, input }) => {
        const obs = await h.call(tool, input);
        const events = h.eventsOf(h.lastCallId());
        const types = events.map((e) => e.type);
        expect(types.filter((t) => t === 'tool.observation')).toHaveLength(1);
        expect(types.at(-1)).toBe('tool.observation');
        // Stages only ever move forward, in the one order.
        expect(types.map((t) => RAN.indexOf(t))).toEqual([...types.map((t) => RAN.indexOf(t))].sort((a, b) => a - b));
        const validation = events.find((e) => e.type === 'tool.validation')?.data as { ok: boolean } | undefined;
        const approval = events.find((e) => e.type === 'tool.approval')?.data as { decision: string } | undefined;
        const executed = types.includes('tool.execution.started');
        if (!validation?.ok || approval?.decision !== 'allow') expect(executed).toBe(false);
        if (executed) expect(types).toEqual(RAN);
        seen[executed ? 'executed' : 'rejected']++;
        expect(['ok', 'failed', 'rejected', 'denied']).toContain(obs.outcome);
        expect(obs.id).toMatch(/^obs-\d+$/);
      }),
      { numRuns: 300, seed: Number(process.env.GATEHOUSE_FC_SEED ?? Date.now() % 2 ** 31) },
    );
    // The generator must reach both sides, or the property says nothing about execution.
    expect(seen.executed).toBeGreaterThan(10);
    expect(seen.rejected).toBeGreaterThan(100);
    // One observation per call, numbered in order.
    const observations = h.tracker.state.observations.map((o) => o.id);
    expect(observations).toEqual(observations.map((_, i) => `obs-${i + 1}`));
  }, 180_000);
});
