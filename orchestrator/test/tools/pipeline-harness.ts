import { afterEach } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { StateTracker } from '../../src/events/state';
import { compilePolicy, createPolicy, emptyPolicy, loadShellClassifier } from '../../src/policy/index';
import type { ApprovalAnswer, ApprovalChannel, ApprovalPrompt } from '../../src/approval/channels/types';
import type { ApprovalPolicy } from '../../src/policy/approval-policy';
import type { Mode } from '../../src/policy/mode';
import { MemorySandbox, TestLog, type MemorySandboxOptions } from '../../src/testing/index';
import { codingTools } from '../../src/tools/builtin/index';
import { ToolPipeline, type CallResult, type Observation, type PipelineDeps } from '../../src/tools/pipeline';
import type { ToolRegistry } from '../../src/tools/registry';
import type { ToolLimits } from '../../src/tools/tool';

// The shell classifier's parser is WebAssembly; loaded once per test file.
const classifier = await loadShellClassifier();

export const LIMITS: ToolLimits = {
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 60_000,
  observationBudget: 4000,
  maxReadLines: 2000,
};

export const ALL_TOOLS = [
  'read_file',
  'write_file',
  'edit_file',
  'list_files',
  'glob',
  'grep',
  'bash',
  'git_status',
  'git_diff',
  'read_artifact',
];

const logs: TestLog[] = [];
afterEach(() => {
  for (const l of logs.splice(0)) l.dispose();
});

/** A policy from an inline policy file, checked like a file's. */
export function policyOf(file: unknown, mode: Mode = 'sandboxed-auto'): ApprovalPolicy {
  return createPolicy(compilePolicy(file, 'test', classifier), mode, classifier);
}

/** A channel that gives the scripted answers in turn and keeps what it was asked. */
export function scriptedChannel(...answers: ApprovalAnswer[]): ApprovalChannel & { asked: ApprovalPrompt[] } {
  const asked: ApprovalPrompt[] = [];
  return {
    name: 'terminal',
    asked,
    ask: (prompt) => {
      asked.push(prompt);
      const answer = answers.shift();
      if (!answer) throw new Error(`unexpected approval request for ${prompt.tool}`);
      return Promise.resolve(answer);
    },
  };
}

export const grant = (scope: 'once' | 'run' = 'once'): ApprovalAnswer => ({
  decision: 'grant',
  scope,
  approver: 'user:test',
  channel: 'terminal',
});
export const deny = (reason: string): ApprovalAnswer => ({
  decision: 'deny',
  approver: 'user:test',
  channel: 'terminal',
  reason,
});
export const pause: ApprovalAnswer = { decision: 'pause', channel: 'headless', reason: 'nobody can answer now' };

export interface Harness {
  deps: PipelineDeps;
  pipeline: ToolPipeline;
  log: TestLog;
  sandbox: MemorySandbox;
  tracker: StateTracker;
  /** A call that must end in an observation (one left pending fails the test). */
  call(tool: unknown, input: unknown): Promise<Observation>;
  /** A call as the pipeline gives it back: observed or pending. */
  callResult(tool: unknown, input: unknown): Promise<CallResult>;
  lastCallId(): string;
  /** The event types of one call (default the last), in order. */
  types(callId?: string): string[];
  eventsOf(callId?: string): EventEnvelope[];
  /** The first event of this type for one call (default the last). */
  event<D = Record<string, unknown>>(type: string, callId?: string): D;
}

/** The observation a call ended in; a call still pending fails the test here. */
export function observed(result: CallResult): Observation;
export function observed(result: CallResult | undefined): Observation | undefined;
export function observed(result: CallResult | undefined): Observation | undefined {
  if (result?.kind === 'pending') throw new Error(`${result.callId} waits for approval ${result.requestId}`);
  return result?.observation;
}

/**
 * The events of a run as a crash would leave them: everything up to and including the `n`th
 * (0-based) event of type `type`.
 */
export function stoppedAfter(h: Harness, type: string, n = 0): EventEnvelope[] {
  const events = h.log.events();
  const at = events.map((e, i) => (e.type === type ? i : -1)).filter((i) => i >= 0)[n];
  if (at === undefined) throw new Error(`no ${type} #${n} in the log`);
  return events.slice(0, at + 1);
}

/** A pipeline over an in-memory sandbox and a real log in a temporary directory: no Docker. */
export function harness(
  opts: {
    sandbox?: MemorySandboxOptions;
    mode?: Mode;
    policy?: ApprovalPolicy;
    surface?: string[];
    limits?: Partial<ToolLimits>;
    channel?: ApprovalChannel;
    registry?: ToolRegistry;
    /** A stopped run to go on from: its events (copied into a new log) and its sandbox. */
    resume?: { events: readonly EventEnvelope[]; sandbox: MemorySandbox };
  } = {},
): Harness {
  const log = new TestLog(opts.resume ? { runId: opts.resume.events[0]!.runId } : {});
  logs.push(log);
  const sandbox = opts.resume?.sandbox ?? new MemorySandbox({ runId: log.runId, ...opts.sandbox });
  const mode = opts.mode ?? 'sandboxed-auto';
  const surface = opts.surface ?? ALL_TOOLS;
  for (const e of opts.resume?.events ?? [])
    log.append(e.type as never, e.actor, e.data as never, { causationId: e.causationId });
  const tracker = new StateTracker(log.events());
  if (!opts.resume) tracker.apply(log.append('run.started', 'user', { task: 'test', mode, surface }));
  const deps: PipelineDeps = {
    log,
    tracker,
    registry: opts.registry ?? codingTools(),
    surface,
    policy: opts.policy ?? createPolicy(emptyPolicy(classifier), mode, classifier),
    sandbox,
    limits: { ...LIMITS, ...opts.limits },
    ...(opts.channel ? { channel: opts.channel } : {}),
  };
  const pipeline = new ToolPipeline(deps);
  let n = Object.keys(tracker.state.approvals.calls).length;
  const last = () => `call_${n}`;
  const eventsOf = (callId = last()) => log.eventsOf(callId);
  return {
    deps,
    pipeline,
    log,
    sandbox,
    tracker,
    call: async (tool, input) => observed(await pipeline.run({ callId: `call_${++n}`, turn: 1, tool, input })),
    callResult: (tool, input) => pipeline.run({ callId: `call_${++n}`, turn: 1, tool, input }),
    lastCallId: last,
    types: (callId) => eventsOf(callId).map((e) => e.type),
    eventsOf,
    event: <D>(type: string, callId?: string) => eventsOf(callId).find((e) => e.type === type)?.data as D,
  };
}

export const REJECTED = ['tool.intent', 'tool.validation', 'tool.observation'];
export const DENIED = ['tool.intent', 'tool.validation', 'tool.approval', 'tool.observation'];
export const RAN = [
  'tool.intent',
  'tool.validation',
  'tool.approval',
  'tool.execution.started',
  'tool.execution.completed',
  'tool.observation',
];

/** The harness's log as the loop takes it: every event appended is folded into the tracker at once. */
export function trackedLog(h: Harness) {
  return {
    append: ((...args: Parameters<Harness['log']['append']>) => {
      const e = h.log.append(...args);
      h.tracker.apply(e);
      return e;
    }) as Harness['log']['append'],
    sync: () => h.log.sync(),
    redact: (t: string) => h.log.redact(t),
    artifacts: h.log.artifacts,
    events: () => h.log.events(),
  };
}
