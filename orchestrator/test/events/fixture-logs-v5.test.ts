import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { LogKey } from '../../src/events/key';
import { RunLog } from '../../src/events/index';
import { replayRun } from '../../src/replay/replay-run';

/**
 * What schema version 5 added, as the v5 fixture's runs hold it (test/fixtures/logs/generate.mjs):
 * four replays of its own runs (each a run of its own), and the hashes replay checks, written by every
 * run. A trace of each of the fixture's runs, made today, must still match what they recorded: the
 * fixture is the regression test of the rebuild. fixture-logs.test.ts runs the older checks over it.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const fixtures = path.join(root, 'test/fixtures/logs');
const runsOf = (v: number) =>
  JSON.parse(readFileSync(path.join(fixtures, `v${v}`, 'runs.json'), 'utf8')) as Record<string, { runId: string }>;
const runs = runsOf(5);

const temps: string[] = [];
afterAll(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});
function copy(v: number): { state: string; key: LogKey } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `gh-fixture-v${v}-`));
  temps.push(dir);
  cpSync(path.join(fixtures, `v${v}`), dir, { recursive: true });
  const keyFile = path.join(dir, 'key', 'log.key');
  chmodSync(keyFile, 0o600);
  return { state: path.join(dir, 'state'), key: LogKey.load({ env: { GATEHOUSE_KEY_FILE: keyFile } }) };
}
const only = (events: EventEnvelope[], type: string): Record<string, unknown>[] =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

describe('fixture logs v5: replays and the hashes they check', () => {
  it('each replay names the run it replays and ends with its verdict', () => {
    const { state } = copy(5);
    const expected = {
      replayTrace: ['trace', 'checked', 'match'],
      replayDryRun: ['dry-run', 'completed', 'denied'],
      replayModel: ['model', 'completed', 'match'],
      replayExecution: ['execution', 'checked', 'match'],
    } as const;
    for (const [name, [mode, of, verdict]] of Object.entries(expected)) {
      const events = RunLog.readEvents(state, runs[name]!.runId);
      expect(events[0]!.data).toMatchObject({ mode: 'replay', replay: { of: runs[of]!.runId, mode } });
      expect(only(events, 'replay.summary')).toEqual([expect.objectContaining({ mode, verdict })]);
    }
    // The dry-run's stricter policy denies `node --test`, which ran: each such decision is on record.
    const decisions = only(RunLog.readEvents(state, runs.replayDryRun!.runId), 'replay.decision');
    expect(decisions.some((d) => d.ran === true && (d.now as { decision: string }).decision === 'deny')).toBe(true);
  });

  it('every model turn of every run records the state hash, and every execution its output hash', () => {
    const { state } = copy(5);
    for (const name of ['completed', 'checked', 'subagent', 'budget'] as const) {
      const events = RunLog.readEvents(state, runs[name]!.runId);
      const requests = only(events, 'model.request');
      expect(requests.length).toBeGreaterThan(0);
      for (const r of requests) expect(r.stateSha256).toMatch(/^[0-9a-f]{64}$/);
      for (const c of only(events, 'tool.execution.completed')) expect(c.outputSha256).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('a trace made today of each v5 run rebuilds every turn to the hashes it recorded', async () => {
    const { state, key } = copy(5);
    for (const name of ['completed', 'paused', 'subagent', 'checked', 'budget', 'provider'] as const) {
      const r = await replayRun(runs[name]!.runId, { mode: 'trace', stateDir: state, key });
      expect({ name, verdict: r.outcome.verdict, differed: r.outcome.differed }).toEqual({
        name,
        verdict: 'match',
        differed: 0,
      });
      expect(r.outcome.compared).toBeGreaterThan(0);
    }
  });
});
