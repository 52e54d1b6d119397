import type { EventEnvelope } from '@gatehouse/shared';
import { describe, expect, it } from 'vitest';
import { activeWallMs, fold, runUsage } from '../../src/events/state';

/** Events as the fold reads them: type, data, seq and time (the rest of the envelope it ignores). */
function events(list: Array<[type: string, secondsIn: number, data?: unknown]>): EventEnvelope[] {
  return list.map(([type, s, data], seq) => ({
    id: `evt-${seq}`,
    runId: 'run_x',
    seq,
    ts: new Date(Date.UTC(2025, 0, 1) + s * 1000).toISOString(),
    type,
    actor: 'runtime',
    causationId: null,
    parentRunId: null,
    data: data ?? {},
    prevHash: '',
    hash: '',
    mac: '',
    schemaVersion: 1,
  })) as unknown as EventEnvelope[];
}
const started = { task: 't', mode: 'confirm-novel', surface: [] };
const output = (usage: Record<string, number>) => ({
  turn: 1,
  text: '',
  toolCalls: [],
  stopReason: 'end_turn',
  usage,
  retries: 0,
});

describe('usage folded from model.output', () => {
  it('sums input, output, cached tokens and cost', () => {
    const s = fold(
      events([
        ['run.started', 0, started],
        ['model.output', 1, output({ inputTokens: 1000, outputTokens: 50, cachedInputTokens: 800, costUsd: 0.0012 })],
        ['model.output', 2, output({ inputTokens: 2000, outputTokens: 70, costUsd: 0.0031 })],
      ]),
    );
    expect(s.tokens).toBe(3120);
    expect(runUsage(s.usage)).toEqual({
      inputTokens: 3000,
      outputTokens: 120,
      cachedInputTokens: 800,
      costUsd: 0.0043,
    });
  });

  it('a turn that used tokens without a price makes the cost unknown (null), not too low', () => {
    const s = fold(
      events([
        ['model.output', 1, output({ inputTokens: 10, outputTokens: 5, costUsd: 0.5 })],
        ['model.output', 2, output({ inputTokens: 10, outputTokens: 5 })],
      ]),
    );
    expect(runUsage(s.usage).costUsd).toBeNull();
    // A failed call with no tokens and no cost leaves a priced run priced.
    const t = fold(events([['model.output', 1, output({ inputTokens: 0, outputTokens: 0 })]]));
    expect(runUsage(t.usage).costUsd).toBe(0);
  });
});

describe('wall time folded from the log', () => {
  it('counts driven stretches only: not the setup before the sandbox, not the time paused', () => {
    const s = fold(
      events([
        ['run.started', 0, started],
        ['setup.started', 1],
        ['sandbox.started', 100], // setup took 100 s: not counted
        ['model.output', 130, output({ inputTokens: 1, outputTokens: 1 })],
        ['run.paused', 160], // 60 s driven
        ['approval.granted', 5000],
        ['run.resumed', 9000], // paused for 2 h 20 min: not counted
        ['sandbox.started', 9010],
        ['run.completed', 9040, { status: 'partial', stopReason: 'cost_budget', decidedBy: 'budget' }], // 30 s
      ]),
    );
    expect(s.activeMs).toBe(90_000);
    expect(activeWallMs(s, Date.UTC(2030, 0, 1))).toBe(90_000);
    expect(s).toMatchObject({ status: 'partial', decidedBy: 'budget' });
  });

  it('a stretch cut short by a crash ends at its last event; the open stretch counts up to now', () => {
    const s = fold(
      events([
        ['run.started', 0, started],
        ['sandbox.started', 10],
        ['model.output', 40, output({ inputTokens: 1, outputTokens: 1 })], // crash after this: 30 s
        ['setup.started', 3000], // the resumed run's setup: not part of either stretch
        ['run.resumed', 3010],
        ['sandbox.started', 3020],
      ]),
    );
    expect(s.activeMs).toBe(30_000);
    expect(activeWallMs(s, Date.UTC(2025, 0, 1) + 3025 * 1000)).toBe(35_000);
  });

  it('resuming a run that stopped on a budget makes it running again', () => {
    const s = fold(
      events([
        ['run.started', 0, started],
        ['run.completed', 1, { status: 'partial', stopReason: 'token_budget', decidedBy: 'budget' }],
        ['run.resumed', 2, { fromSeq: 1, workspaceFrom: 'checkpoint', files: [] }],
      ]),
    );
    expect(s).toMatchObject({ status: 'running', stopReason: undefined, decidedBy: undefined });
  });
});
