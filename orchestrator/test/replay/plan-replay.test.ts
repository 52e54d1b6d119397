import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isEvent } from '@gatehouse/shared';
import { LogKey } from '../../src/events/key';
import { RunLog } from '../../src/events/index';
import { replayRun } from '../../src/replay/replay-run';

/**
 * Replaying a plan run (the v6 fixture's, made by `gatehouse plan`: test/fixtures/logs/generate.mjs).
 * The trace is checked in fixture-logs-v6.test.ts. A dry-run decides its calls again: an escalation (an
 * approval request with no tool call) is not one of them, and a deviation stays refused whatever the
 * policy, since a task's scope is the approved plan's, not the policy's.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const v6 = path.join(root, 'test/fixtures/logs/v6');
const runs = JSON.parse(readFileSync(path.join(v6, 'runs.json'), 'utf8')) as Record<string, { runId: string }>;

const temps: string[] = [];
afterAll(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});
function copy(): { state: string; key: LogKey; dir: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-plan-replay-'));
  temps.push(dir);
  cpSync(v6, dir, { recursive: true });
  const keyFile = path.join(dir, 'key', 'log.key');
  chmodSync(keyFile, 0o600);
  return { dir, state: path.join(dir, 'state'), key: LogKey.load({ env: { GATEHOUSE_KEY_FILE: keyFile } }) };
}

describe('replaying a plan run', () => {
  it('dry-run: each recorded call decided again, the escalation not a call, a deviation still refused', async () => {
    const { dir, state, key } = copy();
    // A policy that allows every command: were the deviation a policy matter, it would now be allowed.
    const policyFile = path.join(dir, 'auto.json');
    writeFileSync(policyFile, JSON.stringify({ mode: 'sandboxed-auto' }));
    const r = await replayRun(runs.plan!.runId, { mode: 'dry-run', stateDir: state, key, policyFile });
    const decisions = RunLog.readEvents(state, r.replayRunId).flatMap((e) =>
      isEvent(e, 'replay.decision') ? [e.data] : [],
    );
    const ids = decisions.map((d) => d.callId);
    expect(ids).not.toContain('esc_t2_1');
    // The plan's submission, each complete_task, the task calls and the deviation are all decided again.
    for (let turn = 1; turn <= 11; turn++) expect(ids).toContain(`call_${turn}_0`);
    const submit = decisions.find((d) => d.callId === 'call_1_0')!;
    // Put to a person at the gate, who approved it (`gatehouse plan approve --on-behalf-of fixture-reviewer`).
    expect(Object.keys(submit.then).sort()).toEqual(['by', 'decision', 'rule']);
    expect(submit.then).toMatchObject({ decision: 'ask', rule: 'gatehouse:plan-gate' });
    expect(submit.then.by).toMatch(/^user:.+ for fixture-reviewer$/);
    const deviation = decisions.find((d) => d.callId === 'call_5_0')!;
    expect(deviation.then).toMatchObject({ decision: 'rejected', rule: 'validation:plan_deviation' });
    expect(deviation.now).toMatchObject({ decision: 'rejected', rule: 'validation:plan_deviation' });
  });
});
