import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newId, type EventDataOf, type EventEnvelope, type EventType } from '@gatehouse/shared';
import { createDelegator, type Delegator } from '../../src/agents/delegation';
import type { AgentScope, Handoff } from '../../src/agents/handoff';
import type { ChildRunHandle, ParentRun } from '../../src/agents/parent-run';
import { StateTracker } from '../../src/events/state';
import { RunLog } from '../../src/events/store';
import { runLoop } from '../../src/loop/loop';
import { createPolicy, emptyPolicy, loadShellClassifier } from '../../src/policy/index';
import { ScriptedProvider, type Script } from '../../src/providers/scripted';
import type { Budgets } from '../../src/run/budgets';
import { tee } from '../../src/run/tee';
import type { AgentRunResult, RunEnvironment } from '../../src/run/types';
import { MemorySandbox, noDriver, type ExecResponder } from '../../src/testing/index';
import { codingTools } from '../../src/tools/builtin/index';
import { ToolPipeline, type CallResult } from '../../src/tools/pipeline';
import type { ModelPrice } from '../../src/usage/model-price';
import { childrenUsage } from '../../src/usage/tree-usage';

// Child logs are created with the installation's key: this file's runs get a key of their own.
process.env.GATEHOUSE_KEY_FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-agents-key-')), 'log.key');

const classifier = await loadShellClassifier();

export const REPO = { 'src/a.ts': 'export const a = 1;\n', 'README.md': '# repo\n' };
export const ALL_TOOLS = ['read_file', 'write_file', 'edit_file', 'list_files', 'glob', 'grep', 'bash', 'delegate'];
const LIMITS = { defaultTimeoutMs: 30_000, maxTimeoutMs: 60_000, observationBudget: 4000, maxReadLines: 2000 };
const BUDGETS: Budgets = { maxTurns: 20, maxToolCalls: 50, maxTokens: 1_000_000, wallClockMs: 600_000 };

export const handoff = (over: Partial<Handoff> = {}): Handoff => ({
  task: 'change src',
  tools: ['read_file', 'write_file', 'bash'],
  paths: ['src/**'],
  evidence: [],
  budget: { turns: 5, toolCalls: 10, tokens: 100_000, seconds: 60 },
  expect: 'what changed',
  ...over,
});

export interface Parent {
  runId: string;
  stateDir: string;
  log: ParentRun['log'];
  sandbox: MemorySandbox;
  pipeline: ToolPipeline;
  delegator: Delegator;
  /** Each child's sandbox, in the order the children started. */
  children: MemorySandbox[];
  /** The parent's `delegate` tool call, through its own pipeline. */
  delegate(h: unknown, callId?: string): Promise<CallResult>;
  /** Events of one type in the parent's log, their data. */
  data<T extends EventType>(type: T): EventDataOf<T>[];
  childEvents(childRunId: string): EventEnvelope[];
}

/**
 * A parent agent without Docker: its log on disk, its workspace in memory, its own pipeline with
 * the real delegator. Each child runs the real loop and pipeline on an in-memory sandbox made from
 * the same repository (what drive.ts does with a container), with the child's scripted model from
 * `children` in the parent's script.
 */
export function parentRun(
  opts: {
    children?: Script[];
    surface?: string[];
    paths?: string[];
    depth?: number;
    maxDepth?: number;
    budgets?: Partial<Budgets>;
    exec?: ExecResponder;
    /** The model's price (every agent of the tree shares it). */
    price?: ModelPrice;
  } = {},
): Parent {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-agents-'));
  const runId = newId('run');
  const raw = RunLog.create(stateDir, runId);
  const tracker = new StateTracker();
  const log = tee(raw, tracker);
  const surface = opts.surface ?? ALL_TOOLS;
  const budgets = { ...BUDGETS, ...opts.budgets };
  log.append('run.started', 'user', { task: 'parent', mode: 'sandboxed-auto', surface, lineage: [runId], budgets });
  const sandbox = new MemorySandbox({ files: REPO, runId, ...(opts.exec ? { exec: opts.exec } : {}) });
  const env: RunEnvironment = {
    provider: new ScriptedProvider({ turns: [], children: opts.children ?? [] }),
    driver: noDriver(),
    stateDir,
    policy: createPolicy(emptyPolicy(classifier), 'sandboxed-auto', classifier),
    budgets,
    ...(opts.price ? { price: { ...opts.price, source: 'test' } } : {}),
    apply: false,
    signal: new AbortController().signal,
  };
  const depth = opts.depth ?? 0;
  const scope = (): AgentScope => {
    // As drive.ts counts it: what was used, and every budget already handed to a child.
    const handed = { turns: 0, toolCalls: 0, tokens: 0 };
    for (const e of log.events())
      if (e.type === 'agent.spawned') {
        const b = e.data.budget;
        handed.turns += b.turns;
        handed.toolCalls += b.toolCalls;
        handed.tokens += b.tokens;
      }
    const st = tracker.state;
    return {
      runId,
      lineage: [runId],
      depth,
      maxDepth: opts.maxDepth ?? 2,
      surface,
      paths: opts.paths ?? ['**'],
      observations: new Set(st.observations.map((o) => o.id)),
      remaining: {
        turns: budgets.maxTurns - st.turns - handed.turns,
        toolCalls: budgets.maxToolCalls - st.toolCalls - handed.toolCalls,
        tokens: budgets.maxTokens - st.tokens - handed.tokens,
        seconds: budgets.wallClockMs / 1000,
        ...(budgets.maxCostUsd !== undefined
          ? { costUsd: budgets.maxCostUsd - st.usage.costUsd - childrenUsage(stateDir, runId, log.events()).costUsd }
          : {}),
      },
    };
  };
  const children: MemorySandbox[] = [];
  const drive = async (child: RunEnvironment, h: ChildRunHandle): Promise<AgentRunResult> => {
    const box = new MemorySandbox({ files: REPO, runId: h.raw.runId, ...(opts.exec ? { exec: opts.exec } : {}) });
    children.push(box);
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
      system: 'test',
      task: h.task,
      tools: h.registry.describe(h.surface),
      budgets: child.budgets,
      ...(child.price ? { price: child.price } : {}),
      contextTokenBudget: 100_000,
      signal: child.signal,
    });
    await h.finish?.(box, outcome);
    if (outcome.status !== 'paused')
      h.log.append('run.completed', 'runtime', {
        status: outcome.status,
        stopReason: outcome.stopReason,
        ...(outcome.answer !== undefined ? { answer: outcome.answer } : {}),
        filesChanged: [],
        applied: false,
      });
    h.raw.close();
    const base = { runId: h.raw.runId, runDir: h.raw.runDir, repoDir: h.repoDir, filesChanged: [], applied: false };
    return { ...outcome, ...base, pendingRequests: [] };
  };
  // eslint-disable-next-line prefer-const -- the delegator needs the pipeline it is part of
  let pipeline: ToolPipeline;
  const delegator = createDelegator({
    env,
    runId,
    lineage: [runId],
    depth,
    maxDepth: opts.maxDepth ?? 2,
    maxParallel: 4,
    repoDir: '/repo',
    log,
    sandbox,
    run: (call) => pipeline.run(call),
    drive,
    runDir: raw.runDir,
    scope,
  });
  pipeline = new ToolPipeline({
    log,
    tracker,
    registry: codingTools(),
    surface,
    policy: env.policy,
    sandbox,
    limits: LIMITS,
    lineage: [runId],
    agent: scope,
    delegate: (h, callId, signal) => delegator.run(h, callId, signal),
  });
  return {
    runId,
    stateDir,
    log,
    sandbox,
    pipeline,
    delegator,
    children,
    delegate: (input, callId = `call_${newId('d')}`) => pipeline.run({ callId, turn: 1, tool: 'delegate', input }),
    data: <T extends EventType>(type: T) =>
      log
        .events()
        .filter((e) => e.type === type)
        .map((e) => e.data as EventDataOf<T>),
    childEvents: (childRunId) => RunLog.readEvents(stateDir, childRunId),
  };
}
