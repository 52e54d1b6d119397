import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newId } from '@gatehouse/shared';
import type { ApprovalChannel } from '../../src/approval/channels/types';
import { StateTracker } from '../../src/events/state';
import { EventLogCorruptError } from '../../src/events/log-errors';
import { RunLog } from '../../src/events/store';
import { runLoop, type LoopOutcome } from '../../src/loop/loop';
import { ScriptedProvider, type Script } from '../../src/providers/scripted';
import { ResumeError, resumeAgent } from '../../src/run/resume';
import { tee } from '../../src/run/tee';
import type { RunEnvironment } from '../../src/run/types';
import { MemorySandbox, noDriver, TestLog } from '../../src/testing/index';
import { codingTools } from '../../src/tools/builtin/index';
import { ToolPipeline } from '../../src/tools/pipeline';
import { ALL_TOOLS, grant, LIMITS, pause, policyOf, scriptedChannel } from '../tools/pipeline-harness';

// Logs made with RunLog.create use the installation's key: these tests get a key of their own.
process.env.GATEHOUSE_KEY_FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-resume-key-')), 'log.key');

const POLICY = policyOf({ ask: ['bash(*)'] });
const BUDGETS = { maxTurns: 10, maxToolCalls: 10, maxTokens: 1_000_000, wallClockMs: 600_000 };
const SCRIPT: Script = {
  turns: [{ toolCalls: [{ name: 'bash', input: { command: 'make deploy' } }] }, { final: 'deployed (obs-1)' }],
};

const logs: TestLog[] = [];
afterEach(() => {
  for (const l of logs.splice(0)) l.dispose();
});

/**
 * One stretch of a run as drive.ts runs it, without Docker: the state folded from the log, a
 * fresh model and pipeline, then the loop (resuming: continuing the last turn's open calls first).
 */
function stretch(
  log: TestLog,
  sandbox: MemorySandbox,
  channel: ApprovalChannel,
  resume: boolean,
): Promise<LoopOutcome> {
  const tracker = new StateTracker(log.events());
  const teed = tee(log.log, tracker);
  const provider = new ScriptedProvider(SCRIPT);
  provider.resumeAfter(tracker.state.turns);
  const registry = codingTools();
  const pipeline = new ToolPipeline({
    log: teed,
    tracker,
    registry,
    surface: ALL_TOOLS,
    policy: POLICY,
    sandbox,
    limits: LIMITS,
    channel,
  });
  return runLoop({
    provider,
    log: teed,
    tracker,
    pipeline,
    system: 'test',
    task: 'deploy',
    tools: registry.describe(ALL_TOOLS),
    budgets: BUDGETS,
    contextTokenBudget: 100_000,
    signal: new AbortController().signal,
    resume,
  });
}

describe('resume: a run paused on an approval', () => {
  it('resumes once granted, and runs the approved action exactly once', async () => {
    const log = new TestLog();
    logs.push(log);
    log.append('run.started', 'user', { task: 'deploy', mode: 'sandboxed-auto', surface: ALL_TOOLS });
    const runs: string[] = [];
    const sandbox = new MemorySandbox({
      exec: ({ command }) => (runs.push(command), { exitCode: 0, output: 'deployed\n' }),
    });
    const paused = await stretch(log, sandbox, scriptedChannel(pause), false);
    const requested = log.events().find((e) => e.type === 'approval.requested')!;
    const asked = requested.data;
    expect(paused).toEqual({ status: 'paused', stopReason: 'awaiting_approval', pending: [asked.requestId] });
    expect(runs).toEqual([]);

    // As `gatehouse approve` does, while the run is stopped: the grant goes into the log.
    const granted = log.append(
      'approval.granted',
      'user',
      {
        requestId: asked.requestId,
        callId: asked.callId,
        actionHash: asked.actionHash,
        executionHash: asked.executionHash,
        scope: 'once',
        approver: 'user:cli',
        channel: 'cli',
        reason: '',
      },
      { causationId: requested.id },
    );
    // Nobody may be asked again: the grant on record is the answer.
    const resumed = await stretch(log, sandbox, scriptedChannel(), true);
    expect(resumed).toMatchObject({ status: 'final', answer: 'deployed (obs-1)' });
    expect(runs).toEqual(['make deploy']);
    expect(sandbox.executed()).toMatchObject([{ primitive: 'exec', approval: { id: granted.id, by: 'user' } }]);
    const ofCall = log.eventsOf(asked.callId).map((e) => e.type);
    expect(ofCall.filter((t) => t === 'tool.execution.started')).toHaveLength(1);
    expect(ofCall.filter((t) => t === 'tool.observation')).toHaveLength(1);
    // The model was not asked for the paused turn again: one call in the whole log.
    expect(log.events().filter((e) => e.type === 'tool.intent')).toHaveLength(1);
  });

  it('still unanswered on resume: it pauses again on the same request and runs nothing', async () => {
    const log = new TestLog();
    logs.push(log);
    log.append('run.started', 'user', { task: 'deploy', mode: 'sandboxed-auto', surface: ALL_TOOLS });
    const sandbox = new MemorySandbox({ exec: () => ({ exitCode: 0, output: '' }) });
    const first = await stretch(log, sandbox, scriptedChannel(pause), false);
    const again = await stretch(log, sandbox, scriptedChannel(pause), true);
    expect(again).toEqual(first);
    expect(sandbox.executed()).toEqual([]);
    expect(log.events().filter((e) => e.type === 'approval.requested')).toHaveLength(1);
    // …and a later grant through the channel runs it, once.
    expect(await stretch(log, sandbox, scriptedChannel(grant()), true)).toMatchObject({ status: 'final' });
    expect(sandbox.executed()).toHaveLength(1);
  });
});

/** A run's log on disk, as `gatehouse run` leaves it, for resumeAgent itself. */
function runOnDisk(ended: boolean): { stateDir: string; runId: string; file: string } {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-resume-'));
  const runId = newId('run');
  const log = RunLog.create(stateDir, runId);
  log.append('run.started', 'user', { task: 'deploy', mode: 'sandboxed-auto', surface: ALL_TOOLS, repo: '/repo' });
  if (ended)
    log.append('run.completed', 'runtime', {
      status: 'final',
      stopReason: 'final_answer',
      answer: 'done',
      filesChanged: [],
      applied: false,
    });
  else log.append('run.paused', 'runtime', { pending: ['apr_1'], workspace: { dir: null, files: [], deleted: [] } });
  log.close();
  return { stateDir, runId, file: path.join(log.runDir, 'events.jsonl') };
}

/** What resuming needs, with a sandbox driver that throws if resume gets as far as Docker. */
const envFor = (stateDir: string): RunEnvironment => ({
  provider: new ScriptedProvider(SCRIPT),
  driver: noDriver(),
  stateDir,
  policy: POLICY,
  budgets: BUDGETS,
  apply: false,
  signal: new AbortController().signal,
});

describe('resume refuses, before anything runs', () => {
  it('a run that already completed', async () => {
    const run = runOnDisk(true);
    const before = readFileSync(run.file);
    const refused = resumeAgent(run.runId, envFor(run.stateDir));
    await expect(refused).rejects.toBeInstanceOf(ResumeError);
    await expect(refused).rejects.toThrow(/already ended \(final: final_answer\); there is nothing to resume/);
    expect(readFileSync(run.file)).toEqual(before);
  });

  it('a run whose log was tampered with', async () => {
    const run = runOnDisk(false);
    const lines = readFileSync(run.file, 'utf8').split('\n');
    lines[0] = lines[0]!.replace('"task":"deploy"', '"task":"deploy to production"');
    writeFileSync(run.file, lines.join('\n'));
    const before = readFileSync(run.file);
    const refused = resumeAgent(run.runId, envFor(run.stateDir));
    await expect(refused).rejects.toBeInstanceOf(EventLogCorruptError);
    await expect(refused).rejects.toThrow(/line 1\b/);
    // Not cut, not appended to: the evidence stays as it was found.
    expect(readFileSync(run.file)).toEqual(before);
  });
});
