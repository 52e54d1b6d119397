import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import type { Actor, EventDataOf, EventType } from '@gatehouse/shared';
import { readFileSync } from 'node:fs';
import { RunLog, type RunLogOptions } from '../../src/events/index';
import { LogKey } from '../../src/events/key';

const dirs: string[] = [];

// Each test file anchors its logs with a key (and heads) of its own: sample runs are deterministic,
// so two files writing the same run id would otherwise share a head.
process.env.GATEHOUSE_KEY_FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-events-key-')), 'log.key');

/** A fresh state directory, removed after the test. */
export function tempStateDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-events-'));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const HEX = 'ab'.repeat(32);

export type AnyEvent = { [T in EventType]: { type: T; actor: Actor; data: EventDataOf<T> } }[EventType];

/** A plausible run: started, then intent / validation / approval / execution / observation cycles. */
export function sampleEvent(i: number): AnyEvent {
  if (i === 0)
    return {
      type: 'run.started',
      actor: 'runtime',
      data: { task: 'fix the failing test', mode: 'auto', surface: ['read_file', 'bash'], repo: '/repo' },
    };
  const callId = `call-${Math.floor(i / 6)}`;
  switch (i % 6) {
    case 0:
      return {
        type: 'tool.intent',
        actor: 'model',
        data: {
          callId,
          turn: i,
          tool: 'bash',
          input: { command: `npm test -- --grep "case ${i}"`, nested: { list: [1, 'two', null, true] } },
        },
      };
    case 1:
      return {
        type: 'tool.validation',
        actor: 'runtime',
        data: { callId, ok: true, stage: 'semantic', errors: [], input: { command: 'npm test' } },
      };
    case 2:
      return {
        type: 'tool.approval',
        actor: 'policy',
        data: { callId, decision: 'allow', policyId: 'default', reason: 'test command', actionHash: HEX },
      };
    case 3:
      return {
        type: 'tool.execution.started',
        actor: 'runtime',
        data: {
          callId,
          invocationId: `inv-${i}`,
          executor: 'sandbox',
          primitive: 'exec',
          input: { command: 'npm test' },
          timeoutMs: 60_000,
          approvalId: `appr-${i}`,
        },
      };
    case 4:
      return {
        type: 'tool.execution.completed',
        actor: 'sandbox',
        data: {
          callId,
          invocationId: `inv-${i}`,
          status: 'ok',
          exitCode: 0,
          signal: null,
          durationMs: 12.5,
          bytes: 2048,
          truncated: false,
          filesChanged: [],
          artifactRefs: ['art-0123456789abcdef'],
        },
      };
    default:
      return {
        type: 'tool.observation',
        actor: 'runtime',
        data: {
          callId,
          observationId: `obs-${i}`,
          tool: 'bash',
          outcome: 'ok',
          content: `ok ${i} — ✓ 測試 🎉`,
          truncated: false,
        },
      };
  }
}

export function appendSample(log: RunLog, i: number): void {
  let e = sampleEvent(i);
  if (e.type === 'tool.execution.completed') {
    // A real stored output, as the pipeline keeps one: verify re-hashes it.
    const a = log.artifacts.put(`full output of ${e.data.callId}\n`);
    e = {
      ...e,
      data: { ...e.data, artifactRefs: [a.ref], artifacts: [{ ref: a.ref, sha256: a.sha256, bytes: a.bytes }] },
    };
  }
  (log.append as (t: string, a: Actor, d: unknown, o?: { ts: Date }) => unknown)(e.type, e.actor, e.data, {
    ts: new Date(Date.UTC(2025, 0, 1, 0, 0, i)),
  });
}

/** Create a run with `n` sample events and close it. */
export function writeRun(stateDir: string, runId: string, n: number, opts: RunLogOptions = {}): RunLog {
  const log = RunLog.create(stateDir, runId, opts);
  for (let i = 0; i < n; i++) appendSample(log, i);
  log.close();
  return log;
}

/**
 * Append events as a process that then crashed would: written, never synced nor closed, so the
 * run's head does not cover them (a torn write can only ever hit such events).
 */
export function appendUnsynced(stateDir: string, runId: string, from: number, n: number): void {
  const { log } = RunLog.open(stateDir, runId);
  for (let i = from; i < from + n; i++) appendSample(log, i);
}

/**
 * This test file's installation key, with a heads directory of its own: for tests that continue
 * several copies of one run, each of which is then a history of its own (with one heads directory
 * the copies would be told apart as a fork, which is what a real installation does).
 */
export function keyWithOwnHeads(): LogKey {
  const keyFile = process.env.GATEHOUSE_KEY_FILE!;
  const secret = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'hex');
  return LogKey.fromBytes(secret, { keyFile, headsDir: tempStateDir() });
}
