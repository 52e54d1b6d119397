import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canonicalJson, GIT_SAFE_ENV, type EventEnvelope } from '@gatehouse/shared';
import { afterEach, describe, expect, it } from 'vitest';
import { eventHash, GENESIS_HASH } from '../../src/events/hash';
import { LogKey } from '../../src/events/key';
import { RunLog } from '../../src/events/store';
import { loadShellClassifier } from '../../src/policy/shell/index';
import type { Script } from '../../src/providers/scripted';
import { replayExecutions } from '../../src/replay/execution-replay';
import { isReadOnlyExecution } from '../../src/replay/read-only-call';
import { recordedExecutions, type RecordedExecution } from '../../src/replay/recorded-executions';
import { REPLAY_MODES } from '../../src/replay/replay-modes';
import { replayRun } from '../../src/replay/replay-run';
import { MemorySandbox, TestLog, type ExecResponder } from '../../src/testing/index';
import { codingTools } from '../../src/tools/builtin/index';
import { recordRun } from './recorded-run';

process.env.GATEHOUSE_KEY_FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-rt14-key-')), 'log.key');

/**
 * Red team (issue 14): a recorded log is material to judge, not a script to obey. An execution
 * replay sends each recorded `tool.execution.started.input` verbatim; these tests hand it logs whose
 * executions say something other than their read-only intents, and logs edited without the key.
 */
const FILES = { 'a.txt': 'one\n' };
const SCRIPT: Script = {
  turns: [
    { toolCalls: [{ name: 'read_file', input: { path: 'a.txt' } }] },
    { toolCalls: [{ name: 'bash', input: { command: 'cat a.txt' } }] },
    { toolCalls: [{ name: 'git_status', input: {} }] },
    { final: 'done' },
  ],
};

const logs: TestLog[] = [];
afterEach(() => {
  for (const l of logs.splice(0)) l.dispose();
});

async function recorded() {
  const rec = await recordRun(SCRIPT, FILES, () => ({ output: 'one\n' }));
  return { ...rec, calls: recordedExecutions(RunLog.readEvents(rec.stateDir, rec.runId)) };
}

/** Replays the (forged) executions into a fresh in-memory sandbox, with the production classification. */
async function replayForged(calls: RecordedExecution[]) {
  const classifier = await loadShellClassifier();
  const registry = codingTools();
  const sandbox = new MemorySandbox({ files: FILES, exec: () => ({ output: 'one\n' }) });
  const log = new TestLog();
  logs.push(log);
  await replayExecutions(calls, {
    sandbox,
    isReadOnly: (c) => isReadOnlyExecution(registry, classifier, c),
    allowWrites: false,
    log,
    signal: new AbortController().signal,
    say: () => undefined,
  });
  const steps = log.events().flatMap((e) => (e.type === 'replay.execution' ? [e.data] : []));
  return { sandbox, steps };
}

function forge(calls: RecordedExecution[], tool: string, started: Partial<RecordedExecution['started']>) {
  return calls.map((c) => (c.tool === tool ? { ...c, started: { ...c.started, ...started } } : c));
}

describe('red team 14: an execution whose primitive input is not its read-only intent', () => {
  it('the genuine log: every call is read-only and re-run (what the forgeries are judged against)', async () => {
    const { calls } = await recorded();
    const { steps, sandbox } = await replayForged(calls);
    expect(steps.map((s) => [s.tool, s.readOnly, s.outcome])).toEqual([
      ['read_file', true, 'same'],
      ['bash', true, 'same'],
      ['git_status', true, 'same'],
    ]);
    expect(sandbox.calls.map((c) => c.primitive)).toEqual(['read_file', 'exec', 'exec']);
  });

  it('intent `cat a.txt`, execution `rm -f a.txt`: the rm is never sent without --allow-writes', async () => {
    const { calls } = await recorded();
    const bash = calls.find((c) => c.tool === 'bash')!;
    const input = { ...(bash.started.input as object), command: 'rm -f a.txt' };
    const { steps, sandbox } = await replayForged(forge(calls, 'bash', { input }));
    expect(sandbox.calls.map((c) => (c.input as { command?: string }).command)).not.toContain('rm -f a.txt');
    expect(steps.find((s) => s.tool === 'bash')).toMatchObject({ readOnly: false, outcome: 'skipped' });
  });

  it('the same command with the git guards dropped and BASH_ENV added is not the planned call: not sent', async () => {
    const { calls } = await recorded();
    const bash = calls.find((c) => c.tool === 'bash')!;
    const input = { ...(bash.started.input as object), env: { BASH_ENV: './evil.sh' } };
    const { sandbox } = await replayForged(forge(calls, 'bash', { input }));
    expect(sandbox.calls.filter((c) => c.primitive === 'exec').map((c) => canonicalJson(c.input))).not.toContain(
      canonicalJson(input),
    );
  });

  it("git_status's exec replaced by a command that writes: not sent", async () => {
    const { calls } = await recorded();
    const input = { command: 'touch pwned', cwd: '.', env: { ...GIT_SAFE_ENV } };
    const { sandbox, steps } = await replayForged(forge(calls, 'git_status', { input }));
    expect(sandbox.calls.map((c) => (c.input as { command?: string }).command)).not.toContain('touch pwned');
    expect(steps.find((s) => s.tool === 'git_status')).toMatchObject({ readOnly: false, outcome: 'skipped' });
  });

  it('a read_file intent whose execution is a write_file primitive: not sent', async () => {
    const { calls } = await recorded();
    const input = { path: 'a.txt', content: 'pwned\n' };
    const { sandbox } = await replayForged(forge(calls, 'read_file', { primitive: 'write_file', input }));
    expect(sandbox.calls.map((c) => c.primitive)).not.toContain('write_file');
  });
});

/** Rewrites a log on disk as someone without the key would: the data edited, the hash chain recomputed. */
function editWithoutKey(stateDir: string, runId: string, edit: (e: EventEnvelope) => void): void {
  const file = path.join(stateDir, 'runs', runId, 'events.jsonl');
  const events = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as EventEnvelope & { mac?: string });
  let prev = GENESIS_HASH;
  for (const e of events) {
    edit(e);
    (e as { prevHash: string }).prevHash = prev;
    (e as { hash: string }).hash = eventHash(e);
    prev = e.hash;
  }
  writeFileSync(file, events.map((e) => canonicalJson(e)).join('\n') + '\n');
}

describe('red team 14: a log edited without the key', () => {
  it('is refused by every replay (it fails gatehouse verify): a replay of it would not be of what ran', async () => {
    const rec = await recorded();
    // Readable as a log (the chain recomputes), but its MACs no longer match: forged.
    editWithoutKey(rec.stateDir, rec.runId, (e) => {
      if (e.type === 'tool.intent' && (e.data as { tool: string }).tool === 'bash')
        (e.data as { input: { command: string } }).input.command = 'cat a.txt # reviewed';
    });
    expect(() => RunLog.readEvents(rec.stateDir, rec.runId)).not.toThrow();
    expect(REPLAY_MODES.trace).toBeDefined();
    await expect(replayRun(rec.runId, { mode: 'trace', stateDir: rec.stateDir })).rejects.toThrow(
      /fails gatehouse verify/,
    );
    await expect(
      replayRun(rec.runId, { mode: 'dry-run', stateDir: rec.stateDir, policyFile: '/nonexistent' }),
    ).rejects.toThrow(/fails gatehouse verify/);
  });
});

describe('red team 14: a command the shell classifier calls read-only that wrote when it ran', () => {
  // `npm ls` is read-only to the classifier, but a repository's own .npmrc (`logs-dir=./npmlogs`,
  // `cache=./c`) makes it write into the workspace on every run (checked with npm 10 on the host).
  it('is not re-run without --allow-writes: the recorded run saw it change files', async () => {
    const npmLs: Script = { turns: [{ toolCalls: [{ name: 'bash', input: { command: 'npm ls' } }] }, { final: 'ok' }] };
    const wrote: ExecResponder = ({ workspace }) => {
      workspace.write('npmlogs/2026-debug-0.log', 'log\n');
      return { output: 'x@1.0.0\n' };
    };
    const rec = await recordRun(npmLs, FILES, wrote);
    const calls = recordedExecutions(RunLog.readEvents(rec.stateDir, rec.runId));
    expect(calls[0]!.completed?.filesChanged).toEqual(['npmlogs/2026-debug-0.log']);
    const { sandbox, steps } = await replayForged(calls);
    expect(sandbox.calls.filter((c) => c.primitive === 'exec')).toEqual([]);
    expect(steps[0]).toMatchObject({ tool: 'bash', readOnly: false, outcome: 'skipped' });
  });
});

describe('red team 14: a log nothing here can vouch for', () => {
  it("is replayed, and the replay says so (another installation's key: unanchored, not forged)", async () => {
    const rec = await recorded();
    const elsewhere = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-rt14-other-')), 'log.key');
    const key = LogKey.load({ env: { GATEHOUSE_KEY_FILE: elsewhere }, create: true });
    const said: string[] = [];
    const r = await replayRun(rec.runId, { mode: 'trace', stateDir: rec.stateDir, key }, { say: (l) => said.push(l) });
    expect(r.outcome.verdict).toBe('match');
    expect(said[0]).toMatch(/log is unanchored \(.*another installation's key/);
  });
});
