import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { checkFinalAnswer, compileContext } from '../../src/index';

const obs = [
  { id: 'obs-1', callId: 'c1', tool: 'bash', outcome: 'failed' as const },
  { id: 'obs-2', callId: 'c2', tool: 'edit_file', outcome: 'ok' as const },
  { id: 'obs-3', callId: 'c3', tool: 'bash', outcome: 'ok' as const },
];

describe('output contract', () => {
  it.each([
    ['Fixed add() (obs-2); the tests pass (obs-3).', true],
    ['The repository has two source files.', true],
    ['I fixed it and the tests pass.', false],
    ['They pass (obs-1).', false],
    ['The tests pass (obs-9).', false],
    ['I ran the tests (obs-1); they still fail.', true],
  ])('%s -> accepted: %s', (answer, ok) => {
    expect(checkFinalAnswer(answer, obs).ok).toBe(ok);
  });
});

describe('context compiler', () => {
  const event = (seq: number, type: string, data: unknown) => ({ seq, type, data }) as unknown as EventEnvelope;
  const events = [
    event(1, 'model.output', {
      turn: 1,
      text: 'look',
      toolCalls: [{ callId: 'c1', name: 'read_file', input: { path: 'a' } }],
      stopReason: 'tool_use',
      usage: { inputTokens: 0, outputTokens: 0 },
      retries: 0,
    }),
    ...Array.from({ length: 8 }, (_, i) =>
      event(2 + i, 'tool.observation', {
        callId: 'c1',
        observationId: `obs-${i + 1}`,
        tool: 'read_file',
        outcome: 'ok',
        content: `[obs-${i + 1}] ` + 'x'.repeat(4000),
        truncated: false,
      }),
    ),
  ];

  it('projects the log into messages, and compacts the oldest observations to marked references over budget', () => {
    const ctx = compileContext(events, { system: 's', task: 'do it', tools: [], tokenBudget: 5000, keepRecent: 4 });
    expect(ctx.request.messages[0]).toEqual({ role: 'user', content: 'do it' });
    expect(ctx.request.messages[1]).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'c1', name: 'read_file' }] });
    expect(ctx.compacted).toEqual(['obs-1', 'obs-2', 'obs-3', 'obs-4']);
    const tools = ctx.request.messages.filter((m) => m.role === 'tool');
    expect((tools[0] as { content: string }).content).toMatch(/^\[obs-1 compacted to save context/);
    // The most recent observations are never compacted, even over budget.
    expect((tools[7] as { content: string }).content).toContain('xxxx');
  });

  it('compacts nothing within budget', () => {
    expect(compileContext(events, { system: 's', task: 't', tools: [], tokenBudget: 1_000_000 }).compacted).toEqual([]);
  });
});
