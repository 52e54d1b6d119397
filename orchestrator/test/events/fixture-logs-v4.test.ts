import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { RunLog } from '../../src/events/index';
import { buildReport } from '../../src/report/build-report';
import { renderMarkdown } from '../../src/report/render-markdown';

/**
 * What schema version 4 added, as the v4 fixture's runs hold it (test/fixtures/logs/generate.mjs):
 * the claim judge's feedback, the check run by gatehouse, usage and cost, a cost budget and its
 * resume, and a real provider's odd endings. fixture-logs.test.ts runs the older checks over it.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const v4 = path.join(root, 'test/fixtures/logs/v4');
const runs = JSON.parse(readFileSync(path.join(v4, 'runs.json'), 'utf8')) as Record<string, { runId: string }>;

const temps: string[] = [];
afterAll(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});
function state(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-fixture-v4-'));
  temps.push(dir);
  cpSync(v4, dir, { recursive: true });
  chmodSync(path.join(dir, 'key', 'log.key'), 0o600);
  return path.join(dir, 'state');
}
const dataOf = (events: EventEnvelope[], type: string): Record<string, unknown>[] =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

describe('fixture logs v4: how answers are judged and what runs spend', () => {
  it('a lying answer goes back with its claims; gatehouse runs the check after the fix and it decides', () => {
    const s = state();
    const events = RunLog.readEvents(s, runs.checked!.runId);
    expect(dataOf(events, 'run.feedback')).toEqual([
      expect.objectContaining({
        kind: 'contract',
        claims: [expect.objectContaining({ claim: 'All tests pass (obs-1).', cites: ['obs-1'], supported: false })],
      }),
    ]);
    expect(dataOf(events, 'run.check')).toEqual([
      expect.objectContaining({ command: 'node --test', ranBy: 'gatehouse', exitCode: 0, passed: true }),
    ]);
    const [end] = dataOf(events, 'run.completed');
    expect(end).toMatchObject({ status: 'final', decidedBy: 'check', usage: { costUsd: null } });
    const md = renderMarkdown(buildReport(s, runs.checked!.runId));
    expect(md).toContain('node --test');
  });

  it('a cost budget stops the run partial with its usage; resume with more finishes it, cost counted across', () => {
    const s = state();
    const events = RunLog.readEvents(s, runs.budget!.runId);
    const [started] = dataOf(events, 'run.started');
    expect(started).toMatchObject({ budgets: { maxCostUsd: 1.5 } });
    expect(started!.price).toBeTypeOf('object');
    const ends = dataOf(events, 'run.completed');
    expect(ends.map((e) => [e.status, e.stopReason, e.decidedBy])).toEqual([
      ['partial', 'cost_budget', 'budget'],
      ['final', 'final_answer', 'answer'],
    ]);
    const [first, last] = ends.map((e) => (e.usage as { costUsd: number }).costUsd);
    expect(first).toBeGreaterThanOrEqual(1.5);
    expect(last).toBeGreaterThan(first!);
    const resumed = dataOf(events, 'run.resumed');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.budgets).toMatchObject({ maxCostUsd: 5 });
    for (const out of dataOf(events, 'model.output'))
      expect((out.usage as { costUsd: unknown }).costUsd).toBeTypeOf('number');
  });

  it('a provider: a cut-off reply goes back, a cut-off call is kept and never run, [DONE] alone ends a reply', () => {
    const events = RunLog.readEvents(state(), runs.provider!.runId);
    const outputs = dataOf(events, 'model.output');
    expect(outputs.map((o) => [o.stopReason, o.stopNote !== undefined])).toEqual([
      ['max_tokens', false],
      ['max_tokens', false],
      ['end_turn', true],
    ]);
    expect(outputs[1]!.toolCalls).toEqual([expect.objectContaining({ name: 'write_file', truncated: true })]);
    for (const o of outputs) expect(o.usage).toMatchObject({ inputTokens: 200, cachedInputTokens: 128 });
    expect(dataOf(events, 'run.feedback')).toEqual([expect.objectContaining({ kind: 'truncated' })]);
    expect(dataOf(events, 'tool.execution.started')).toEqual([]);
    expect(dataOf(events, 'tool.observation')).toEqual([expect.objectContaining({ outcome: 'rejected' })]);
    const [end] = dataOf(events, 'run.completed');
    expect(end).toMatchObject({
      status: 'final',
      answer: 'Nothing needed changing.',
      usage: { inputTokens: 600, outputTokens: 24, cachedInputTokens: 384 },
    });
  });
});
