import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { RunLog } from '../../src/events/index';
import { auditRun } from '../../src/events/audit';
import { LogKey } from '../../src/events/key';
import { fold } from '../../src/events/state';

/**
 * What schema version 3 added, as the v3 fixture's runs with a setup phase hold it
 * (test/fixtures/logs/generate.mjs): every new event type but none of the older ones' checks,
 * which fixture-logs.test.ts runs over every folder.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const v3 = path.join(root, 'test/fixtures/logs/v3');
const runs = JSON.parse(readFileSync(path.join(v3, 'runs.json'), 'utf8')) as Record<string, { runId: string }>;

const temps: string[] = [];
afterAll(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});
function copy(): { state: string; key: LogKey } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-fixture-v3-'));
  temps.push(dir);
  cpSync(v3, dir, { recursive: true });
  const keyFile = path.join(dir, 'key', 'log.key');
  chmodSync(keyFile, 0o600);
  return { state: path.join(dir, 'state'), key: LogKey.load({ env: { GATEHOUSE_KEY_FILE: keyFile }, create: false }) };
}
const dataOf = (events: EventEnvelope[], type: string): Record<string, unknown>[] =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

describe('fixture logs v3: the run environment', () => {
  it('a setup that completes: setup, preflight, egress both ways, the cache, run.started and sandbox.started', () => {
    const f = copy();
    const events = RunLog.readEvents(f.state, runs.setup!.runId);
    expect(events.map((e) => e.type).slice(0, 9)).toEqual([
      'run.started',
      'setup.started',
      'preflight.completed',
      'egress.allowed',
      'egress.denied',
      'setup.command',
      'setup.completed',
      'preflight.completed',
      'sandbox.started',
    ]);
    const first = events[0]!;
    const started = first.type === 'run.started' ? first.data : undefined;
    expect(started?.tree).toMatchObject({ kind: 'git', dirty: false });
    expect(started?.config).toMatchObject({ ignored: [] });
    const [allowed] = dataOf(events, 'egress.allowed');
    const [denied] = dataOf(events, 'egress.denied');
    expect(allowed).toMatchObject({ phase: 'setup' });
    expect(denied).toMatchObject({ phase: 'setup', reason: 'address not on the allowlist' });
    expect(denied!.port).not.toBe(allowed!.port);
    expect(dataOf(events, 'setup.command')).toEqual([
      expect.objectContaining({ command: 'node setup.js', exitCode: 0, output: 'denied host: 403\n' }),
    ]);
    const [completed] = dataOf(events, 'setup.completed');
    expect(completed).toMatchObject({ cacheHit: false, cachedPaths: 1 });
    const [sandbox] = dataOf(events, 'sandbox.started');
    expect(sandbox).toMatchObject({
      image: completed!.image,
      notices: ['outside-link -> /etc/hostname points outside the repository; not copied'],
    });
    const state = fold(events);
    expect(state).toMatchObject({ status: 'final', stopReason: 'final_answer', toolCalls: 1 });
    expect(state.observations[0]).toMatchObject({ tool: 'read_file', outcome: 'ok' });
    expect(auditRun(f.state, runs.setup!.runId, f.key)).toMatchObject({ verdict: 'intact', problems: [] });
  });

  it('a setup that fails: setup.failed, then the run ends before any model call', () => {
    const f = copy();
    const events = RunLog.readEvents(f.state, runs.setupFailed!.runId);
    expect(events.map((e) => e.type)).toEqual([
      'run.started',
      'setup.started',
      'preflight.completed',
      'setup.command',
      'setup.failed',
      'run.completed',
    ]);
    expect(dataOf(events, 'setup.failed')).toEqual([expect.objectContaining({ stage: 'command', exitCode: 3 })]);
    expect(fold(events)).toMatchObject({ status: 'failed' });
    expect(auditRun(f.state, runs.setupFailed!.runId, f.key)).toMatchObject({ verdict: 'intact', problems: [] });
  });
});
