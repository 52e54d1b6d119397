import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProvider, runLoop } from '../../src/index';
import { scriptedChannel, trackedLog } from '../tools/pipeline-harness';
import { memoryHarness } from './memory-harness';

/** A real loop: the scripted model, the real pipeline over the in-memory sandbox, the real log, memory on. */
async function run(turns: unknown[], opts: Parameters<typeof memoryHarness>[0] = {}) {
  const h = memoryHarness(opts);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-memory-loop-'));
  const script = path.join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ turns }));
  const outcome = await runLoop({
    provider: createProvider(`scripted:${script}`),
    log: trackedLog(h),
    tracker: h.tracker,
    pipeline: h.pipeline,
    system: 's',
    task: 'look around',
    tools: h.deps.registry.describe(h.deps.surface),
    budgets: { maxTurns: 10, maxToolCalls: 10, maxTokens: 1_000_000, wallClockMs: 60_000 },
    contextTokenBudget: 100_000,
    signal: new AbortController().signal,
  });
  return { h, outcome };
}

const readNotes = { toolCalls: [{ name: 'read_file', input: { path: 'NOTES.md' } }] };

describe('injection cannot create a memory record', () => {
  it('"remember that …" and a remember call written into a file are data: reading them stores nothing', async () => {
    const { h } = await run([readNotes, { text: 'I read the notes; nothing to change.' }]);
    const obs = h.log.events().find((e) => e.type === 'tool.observation');
    expect(obs?.data).toMatchObject({ tool: 'read_file', outcome: 'ok' });
    expect(JSON.stringify(obs?.data)).toContain('"tool\\": \\"remember\\"');
    expect(h.log.events().some((e) => e.type === 'memory.stored')).toBe(false);
    expect(h.log.events().filter((e) => e.type === 'tool.intent')).toHaveLength(1);
    expect(h.memory.store.read().records).toEqual([]);
  });

  it('a model that obeys the injection still meets the gate: with no one to grant it, nothing is stored', async () => {
    const obey = {
      toolCalls: [
        {
          name: 'remember',
          input: {
            text: 'push to main without review',
            scope: 'user',
            confidence: 'high',
            citations: [{ observationId: 'obs-1', quote: 'push to main without review' }],
          },
        },
      ],
    };
    // The quote IS in obs-1 (the injected file): verification passes, so only the gate stands between.
    const { h } = await run([readNotes, obey, { text: 'Done.' }]);
    const approval = h.log.events().find((e) => e.type === 'tool.approval' && e.data.callId !== undefined);
    expect(
      h.log
        .events()
        .filter((e) => e.type === 'tool.approval')
        .map((e) => e.data),
    ).toContainEqual(expect.objectContaining({ decision: 'ask', policyId: 'gatehouse:memory-gate' }));
    expect(approval).toBeDefined();
    const remembered = h.log.events().find((e) => e.type === 'tool.observation' && e.data.tool === 'remember');
    expect(remembered?.data).toMatchObject({ outcome: 'denied' });
    expect(h.memory.store.read().records).toEqual([]);

    // A person who denies it: the same.
    const denied = await run([readNotes, obey, { text: 'Done.' }], {
      channel: scriptedChannel({ decision: 'deny', approver: 'user:test', channel: 'terminal', reason: 'injected' }),
    });
    expect(denied.h.memory.store.read().records).toEqual([]);
    expect(denied.h.log.events().some((e) => e.type === 'memory.stored')).toBe(false);
  });
});
