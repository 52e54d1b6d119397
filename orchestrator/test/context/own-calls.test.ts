import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { compileContext } from '../../src/context/compile';

/**
 * A provider refuses a tool result that answers no call of the model's. Gatehouse makes calls of its
 * own — its run of the check (`check_1`), a parent applying a sub-agent's files (`<callId>.write1`) —
 * and their observations must not reach the model as tool results.
 */
const ev = (type: string, data: unknown, actor = 'runtime') => ({ type, data, actor }) as unknown as EventEnvelope;
const obs = (callId: string, n: number) =>
  ev('tool.observation', {
    callId,
    observationId: `obs-${n}`,
    tool: 'write_file',
    outcome: 'ok',
    content: `[obs-${n}]`,
    truncated: false,
  });

describe('the context holds tool results only for the model’s own calls', () => {
  it('leaves out the check run by gatehouse and a parent’s writes of a sub-agent’s files', () => {
    const events = [
      ev(
        'model.output',
        { turn: 1, text: '', toolCalls: [{ callId: 'call_a', name: 'delegate', input: {} }], stopReason: 'tool_use' },
        'model',
      ),
      obs('call_a.write1', 1),
      obs('call_a', 2),
      ev('tool.intent', { callId: 'check_1', turn: 1, tool: 'bash', input: { command: 'npm test' } }),
      obs('check_1', 3),
    ];
    const ctx = compileContext(events, { system: 's', task: 't', tools: [], tokenBudget: 100_000 });
    const tools = ctx.request.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => (m.role === 'tool' ? m.callId : ''))).toEqual(['call_a']);
  });
});
