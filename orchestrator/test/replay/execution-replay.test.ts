import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunLog } from '../../src/events/store';
import { loadShellClassifier } from '../../src/policy/shell/index';
import type { Script } from '../../src/providers/scripted';
import { replayExecutions } from '../../src/replay/execution-replay';
import { isReadOnlyExecution } from '../../src/replay/read-only-call';
import { recordedExecutions } from '../../src/replay/recorded-executions';
import { MemorySandbox, TestLog, type ExecResponder } from '../../src/testing/index';
import { codingTools } from '../../src/tools/builtin/index';
import { recordRun } from './recorded-run';

process.env.GATEHOUSE_KEY_FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-replay-key-')), 'log.key');

/**
 * The execution replay's logic without Docker: a run recorded over the real pipeline, replayed into
 * a fresh in-memory sandbox that counts every invocation it receives (the e2e suite does it for real).
 */
const FILES = { 'a.txt': 'one\n' };
const SCRIPT: Script = {
  turns: [
    { toolCalls: [{ name: 'read_file', input: { path: 'a.txt' } }] },
    { toolCalls: [{ name: 'bash', input: { command: 'cat a.txt' } }] },
    { toolCalls: [{ name: 'bash', input: { command: 'date +%N' } }] },
    { toolCalls: [{ name: 'write_file', input: { path: 'b.txt', content: 'two\n' } }] },
    { toolCalls: [{ name: 'read_file', input: { path: 'b.txt' } }] },
    { final: 'Wrote b.txt (obs-4).' },
  ],
};

/** What the recorded run's commands printed; the fresh sandbox answers `date` with another time. */
const recordedShell: ExecResponder = ({ command, workspace }) =>
  command.includes('date') ? { output: '111\n' } : { output: workspace.read(workspace.resolve('a.txt')) };
const laterShell = (time: string): ExecResponder => {
  return (r) => (r.command.includes('date') ? { output: time } : recordedShell(r));
};

const logs: TestLog[] = [];
afterEach(() => {
  for (const l of logs.splice(0)) l.dispose();
});

async function replay(allowWrites: boolean, shell: ExecResponder) {
  const rec = await recordRun(SCRIPT, FILES, recordedShell);
  expect(rec.outcome.status).toBe('final');
  const calls = recordedExecutions(RunLog.readEvents(rec.stateDir, rec.runId));
  const classifier = await loadShellClassifier();
  const registry = codingTools();
  const sandbox = new MemorySandbox({ files: FILES, exec: shell });
  const log = new TestLog();
  logs.push(log);
  const outcome = await replayExecutions(calls, {
    sandbox,
    isReadOnly: (c) => isReadOnlyExecution(registry, classifier, c),
    allowWrites,
    log,
    signal: new AbortController().signal,
    say: () => undefined,
  });
  const steps = log.events().flatMap((e) => (e.type === 'replay.execution' ? [e.data] : []));
  return { outcome, steps, sandbox };
}

describe('execution replay', () => {
  it('re-runs the read-only calls only; a write and what came after it are skipped, and never sent', async () => {
    const { outcome, steps, sandbox } = await replay(false, laterShell('111\n'));
    expect(steps.map((s) => [s.tool, s.readOnly, s.outcome])).toEqual([
      ['read_file', true, 'same'],
      ['bash', true, 'same'],
      ['bash', true, 'same'],
      ['write_file', false, 'skipped'],
      ['read_file', true, 'skipped'],
    ]);
    expect(steps[3]!.reason).toMatch(/not read-only: --allow-writes/);
    expect(steps[4]!.reason).toMatch(/changed by call_3_0 \(write_file\)/);
    expect(outcome).toEqual({ compared: 3, differed: 0, skipped: 2, verdict: 'match' });
    // What the sandbox received: three reads, not one write.
    expect(sandbox.calls.map((c) => c.primitive)).toEqual(['read_file', 'exec', 'exec']);
    for (const s of steps.filter((x) => x.outcome === 'same')) {
      expect(s.replayed?.outputSha256).toBe(s.recorded.outputSha256);
      expect(s.recorded.outputSha256).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('a command whose output changed is drift, with both hashes on record', async () => {
    const { outcome, steps } = await replay(false, laterShell('222\n'));
    expect(outcome).toMatchObject({ verdict: 'drift', differed: 1 });
    const date = steps[2]!;
    expect(date).toMatchObject({ tool: 'bash', outcome: 'drift', reason: 'the output differs' });
    expect(date.replayed?.outputSha256).not.toBe(date.recorded.outputSha256);
    expect(date.replayed?.exitCode).toBe(date.recorded.exitCode);
  });

  it('--allow-writes runs the writes too, in the fresh sandbox, so later reads see what they saw', async () => {
    const { outcome, steps, sandbox } = await replay(true, laterShell('111\n'));
    expect(steps.map((s) => s.outcome)).toEqual(['same', 'same', 'same', 'same', 'same']);
    expect(outcome).toEqual({ compared: 5, differed: 0, skipped: 0, verdict: 'match' });
    expect(sandbox.calls.map((c) => c.primitive)).toEqual(['read_file', 'exec', 'exec', 'write_file', 'read_file']);
    expect(steps[3]).toMatchObject({ readOnly: false, replayed: { filesChanged: ['b.txt'] } });
  });
});
