import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newId, type EventEnvelope } from '@gatehouse/shared';
import {
  codingTools,
  loadShellClassifier,
  createPolicy,
  emptyPolicy,
  compilePolicy,
  type ApprovalChannel,
  type ApprovalPolicy,
  resolveSurface,
  RunLog,
  StateTracker,
  ToolPipeline,
  type Mode,
  type CallResult,
  type Observation,
  type Sandbox,
  type ToolLimits,
  type ToolRegistry,
} from '@gatehouse/orchestrator';

// Loaded once per test file: the shell classifier's parser is WebAssembly and initialises asynchronously.
const classifier = await loadShellClassifier();

/** The events of a call that ran, in order: intent, validation, approval, execution, observation. */
export const RAN = [
  'tool.intent',
  'tool.validation',
  'tool.approval',
  'tool.execution.started',
  'tool.execution.completed',
  'tool.observation',
];

export const TEST_LIMITS: ToolLimits = {
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 60_000,
  observationBudget: 4000,
  maxReadLines: 2000,
};

export interface PipelineHarness {
  pipeline: ToolPipeline;
  log: RunLog;
  tracker: StateTracker;
  surface: string[];
  /** A call that must end in an observation (one left pending fails the test). */
  call(tool: unknown, input: unknown): Promise<Observation>;
  /** Events recorded for one call, in order. */
  eventsOf(callId: string): EventEnvelope[];
  lastCallId(): string;
}

/** The observation a call ended in; a call still pending fails the test here. */
export function observed(result: CallResult): Observation {
  if (result.kind === 'pending') throw new Error(`${result.callId} waits for approval ${result.requestId}`);
  return result.observation;
}

/** A run's pipeline against a real sandbox and a real on-disk log. */
export function pipelineFor(
  sandbox: Sandbox,
  opts: {
    mode?: Mode;
    surface?: string[];
    limits?: Partial<ToolLimits>;
    channel?: ApprovalChannel;
    policy?: ApprovalPolicy;
    /** Tools beyond the built-in ones (an MCP server's): the registry to use. */
    registry?: ToolRegistry;
  } = {},
): PipelineHarness {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-state-'));
  const runId = newId('run');
  const log = RunLog.create(stateDir, runId);
  const registry = opts.registry ?? codingTools();
  const mode = opts.mode ?? 'sandboxed-auto';
  const surface = opts.surface ?? resolveSurface(registry, { mode });
  const tracker = new StateTracker();
  tracker.apply(log.append('run.started', 'user', { task: 'test', mode, surface }));
  const pipeline = new ToolPipeline({
    log,
    tracker,
    registry,
    surface,
    policy: opts.policy ?? createPolicy(emptyPolicy(classifier), mode, classifier),
    sandbox,
    limits: { ...TEST_LIMITS, ...opts.limits },
    ...(opts.channel ? { channel: opts.channel } : {}),
  });
  let n = 0;
  let last = '';
  return {
    pipeline,
    log,
    tracker,
    surface,
    async call(tool, input) {
      last = `call_${++n}`;
      return observed(await pipeline.run({ callId: last, turn: 1, tool, input }));
    },
    eventsOf: (callId) => log.events().filter((e) => (e.data as { callId?: string }).callId === callId),
    lastCallId: () => last,
  };
}

/** A policy from an inline policy file (rules checked like a file's), for tests. */
export function policyOf(file: unknown, mode: Mode = 'sandboxed-auto'): ApprovalPolicy {
  return createPolicy(compilePolicy(file, 'test', classifier), mode, classifier);
}
