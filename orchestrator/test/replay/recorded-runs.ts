import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newId, sha256Hex, type EventEnvelope } from '@gatehouse/shared';
import { createDelegator } from '../../src/agents/delegation';
import type { AgentScope } from '../../src/agents/handoff';
import type { ChildRunHandle } from '../../src/agents/parent-run';
import type { ApprovalAnswer, ApprovalChannel } from '../../src/approval/channels/types';
import { StateTracker } from '../../src/events/state';
import { RunLog } from '../../src/events/store';
import { runLoop, type LoopOutcome } from '../../src/loop/loop';
import { noDriver, MemorySandbox, type ExecResponder } from '../../src/testing/index';
import { resolveRunPolicy, type Mode, type RunPolicy } from '../../src/policy/index';
import { ScriptedProvider, type Script } from '../../src/providers/scripted';
import { DEFAULT_BUDGETS, type Budgets } from '../../src/run/budgets';
import { runSystemPrompt } from '../../src/run/run-system-prompt';
import { tee } from '../../src/run/tee';
import type { AgentRunResult, RunEnvironment } from '../../src/run/types';
import { codingTools } from '../../src/tools/builtin/index';
import { ToolPipeline } from '../../src/tools/pipeline';
import { resolveSurface } from '../../src/tools/registry';

// Logs made with RunLog.create use the installation's key: these tests get a key of their own.
process.env.GATEHOUSE_KEY_FILE ??= path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-replay-key-')), 'log.key');

const LIMITS = { defaultTimeoutMs: 30_000, maxTimeoutMs: 60_000, observationBudget: 4000, maxReadLines: 2000 };

/** A run to record: a scripted model on an in-memory workspace, through the real loop and pipeline. */
export interface RunSpec {
  script: Script;
  files?: Record<string, string>;
  exec?: ExecResponder;
  /** The policy file the run is started with (`gatehouse run --policy FILE`), as an object written to a file. */
  policy?: unknown;
  /** `--mode`. */
  mode?: Mode;
  budgets?: Partial<Budgets>;
  contextTokenBudget?: number;
  /** The check command (the config's `check`): recorded in run.started.config, as `gatehouse run` records it. */
  check?: string;
  /** Answers of the approval channel, in turn (none: an ask is denied, as with no approver). */
  answers?: ApprovalAnswer[];
  /** The repository's own files (its `.gatehouse/policy.json`…); the workspace is `files`. */
  repoFiles?: Record<string, string>;
}

export interface RecordedRun {
  stateDir: string;
  runId: string;
  repo: string;
  runDir: string;
  outcome: LoopOutcome;
  sandbox: MemorySandbox;
  spec: RunSpec;
  policy: RunPolicy;
  events(): EventEnvelope[];
  /** The run's sub-agents, in the order they started. */
  children(): string[];
}

/** Writes files under a folder (parents made). */
export function writeTree(dir: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
}

/** A policy object as a file, as `--policy FILE` takes it. */
export function policyFile(policy: unknown): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-replay-policy-')), 'policy.json');
  writeFileSync(file, JSON.stringify(policy));
  return file;
}

function channelOf(answers: ApprovalAnswer[] | undefined): ApprovalChannel | undefined {
  if (!answers) return undefined;
  const left = [...answers];
  return {
    name: 'terminal',
    ask: () =>
      Promise.resolve(left.shift() ?? { decision: 'pause', channel: 'headless', reason: 'nobody can answer now' }),
  };
}

/**
 * A run as drive.ts runs it, without Docker: run.started as session.ts records it, then the loop
 * with the system prompt, task, tool specs and token budget drive.ts gives it, the real pipeline
 * and delegator (children run the same loop on their own in-memory sandbox), then run.completed or
 * run.paused. The log is on disk in a state folder of its own.
 */
export async function recordRun(spec: RunSpec): Promise<RecordedRun> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-replay-runs-'));
  const repo = mkdtempSync(path.join(os.tmpdir(), 'gh-replay-repo-'));
  writeTree(repo, { ...spec.files, ...spec.repoFiles });
  const runId = newId('run');
  const policy = await resolveRunPolicy({
    repoDir: repo,
    ...(spec.policy !== undefined ? { policyFile: policyFile(spec.policy) } : {}),
    ...(spec.mode ? { mode: spec.mode } : {}),
  });
  const registry = codingTools();
  const surface = resolveSurface(registry, { mode: policy.policy.mode });
  const budgets = { ...DEFAULT_BUDGETS, maxTurns: 20, maxToolCalls: 40, ...spec.budgets };
  const raw = RunLog.create(stateDir, runId);
  const log = tee(raw, new StateTracker());
  log.append('run.started', 'user', {
    task: 'fix the tests',
    mode: policy.policy.mode,
    surface,
    repo,
    model: 'scripted:test',
    policy: policy.record,
    lineage: [runId],
    budgets,
    ...(spec.check ? { config: configWithCheck(spec.check) } : {}),
  });
  raw.close();
  const sandbox = new MemorySandbox({ files: spec.files ?? {}, runId, ...(spec.exec ? { exec: spec.exec } : {}) });
  const run: RecordedRun = {
    stateDir,
    runId,
    repo,
    runDir: raw.runDir,
    outcome: { status: 'paused', stopReason: 'not run' },
    sandbox,
    spec,
    policy,
    events: () => RunLog.readEvents(stateDir, runId),
    children: () =>
      run
        .events()
        .flatMap((e) => (e.type === 'agent.spawned' && e.data.parentRunId === runId ? [e.data.childRunId] : [])),
  };
  run.outcome = await stretch(run, budgets, false, spec.answers);
  return run;
}

/** `gatehouse resume` of a recorded run, as resume.ts does it: run.resumed (the budgets from now on), then the loop. */
export async function resumeRun(
  run: RecordedRun,
  o: { budgets?: Partial<Budgets>; answers?: ApprovalAnswer[] } = {},
): Promise<void> {
  const started = run.events()[0];
  const recorded = started?.type === 'run.started' ? started.data.budgets : undefined;
  const budgets = { ...DEFAULT_BUDGETS, ...recorded, ...o.budgets };
  run.outcome = await stretch(run, budgets, true, o.answers);
}

async function stretch(
  run: RecordedRun,
  budgets: Budgets,
  resume: boolean,
  answers: ApprovalAnswer[] | undefined,
): Promise<LoopOutcome> {
  const { log: raw } = RunLog.open(run.stateDir, run.runId);
  const tracker = new StateTracker(raw.events());
  const log = tee(raw, tracker);
  const state = tracker.state;
  if (resume)
    log.append('run.resumed', 'user', {
      fromSeq: state.lastSeq,
      workspaceFrom: 'previous-sandbox',
      files: [],
      budgets: { ...budgets },
    });
  log.append('sandbox.started', 'runtime', {
    sandboxId: run.sandbox.sandboxId,
    containerId: 'memory',
    image: 'memory',
    timings: {},
  });
  const registry = codingTools();
  const surface = [...state.surface];
  const channel = channelOf(answers);
  const provider = new ScriptedProvider(run.spec.script);
  provider.resumeAfter(state.turns);
  const scope = (): AgentScope => ({
    runId: run.runId,
    lineage: [run.runId],
    depth: 0,
    maxDepth: 2,
    surface,
    paths: ['**'],
    observations: new Set(tracker.state.observations.map((x) => x.id)),
    remaining: { turns: 10, toolCalls: 20, tokens: 1_000_000, seconds: 600 },
  });
  const env: RunEnvironment = {
    provider,
    driver: noDriver(),
    stateDir: run.stateDir,
    policy: run.policy.policy,
    policyRecord: run.policy.record,
    budgets,
    apply: false,
    signal: new AbortController().signal,
  };
  // eslint-disable-next-line prefer-const -- the delegator needs the pipeline it is part of
  let pipeline: ToolPipeline;
  const delegator = createDelegator({
    env,
    runId: run.runId,
    lineage: [run.runId],
    depth: 0,
    maxDepth: 2,
    maxParallel: 2,
    repoDir: run.repo,
    runDir: raw.runDir,
    log,
    sandbox: run.sandbox,
    run: (call) => pipeline.run(call),
    drive: (child, h) => driveChild(run, child, h),
    scope,
  });
  pipeline = new ToolPipeline({
    log,
    tracker,
    registry,
    surface,
    policy: run.policy.policy,
    sandbox: run.sandbox,
    limits: LIMITS,
    lineage: [run.runId],
    agent: scope,
    delegate: (h, callId, signal) => delegator.run(h, callId, signal),
    ...(channel ? { channel } : {}),
  });
  const check = run.spec.check;
  const outcome = await runLoop({
    provider,
    log,
    tracker,
    pipeline,
    system: runSystemPrompt(budgets, check),
    task: state.task ?? '',
    tools: registry.describe(surface),
    budgets,
    contextTokenBudget: run.spec.contextTokenBudget ?? 100_000,
    signal: env.signal,
    resume,
    ...(check ? { check: { command: check, timeoutMs: LIMITS.maxTimeoutMs } } : {}),
  });
  end(log, outcome);
  raw.close();
  return outcome;
}

/** A child as drive.ts runs one: its own loop on its own sandbox, no check, the system prompt of its budgets. */
async function driveChild(run: RecordedRun, child: RunEnvironment, h: ChildRunHandle): Promise<AgentRunResult> {
  const box = new MemorySandbox({ files: {}, runId: h.raw.runId, ...(run.spec.exec ? { exec: run.spec.exec } : {}) });
  await h.prepare?.(box);
  const pipeline = new ToolPipeline({
    log: h.log,
    tracker: h.tracker,
    registry: h.registry,
    surface: h.surface,
    policy: child.policy,
    sandbox: box,
    limits: LIMITS,
  });
  const outcome = await runLoop({
    provider: child.provider,
    log: h.log,
    tracker: h.tracker,
    pipeline,
    system: runSystemPrompt(child.budgets),
    task: h.task,
    tools: h.registry.describe(h.surface),
    budgets: child.budgets,
    contextTokenBudget: run.spec.contextTokenBudget ?? 100_000,
    signal: child.signal,
  });
  await h.finish?.(box, outcome);
  end(h.log, outcome);
  h.raw.close();
  const base = { runId: h.raw.runId, runDir: h.raw.runDir, repoDir: h.repoDir, filesChanged: [], applied: false };
  return { ...outcome, ...base, pendingRequests: [] };
}

function end(log: ReturnType<typeof tee>, outcome: LoopOutcome): void {
  if (outcome.status === 'paused')
    log.append('run.paused', 'runtime', {
      pending: outcome.pending ?? [],
      workspace: { dir: null, files: [], deleted: [] },
    });
  else
    log.append('run.completed', 'runtime', {
      status: outcome.status,
      stopReason: outcome.stopReason,
      ...(outcome.answer !== undefined ? { answer: outcome.answer } : {}),
      filesChanged: [],
      applied: false,
    });
}

function configWithCheck(check: string) {
  return {
    source: 'test config',
    sha256: sha256Hex(check),
    ignored: [],
    environment: {
      image: 'memory',
      setup: [],
      check,
      egress: { setup: [], agent: [], deny: [] },
      copy: { exclude: [], include: [] },
      limits: {},
      setupSecrets: [],
    },
  };
}
