import type { EventDataOf, ValidationError } from '@gatehouse/shared';
import type { StateTracker } from '../../events/state';
import type { ApprovalChannel } from '../../approval/channels/types';
import type { ApprovalPolicy } from '../../policy/approval-policy';
import type { AgentScope, Handoff } from '../../agents/handoff';
import type { LogPort, SandboxPort } from '../ports';
import type { ToolRegistry } from '../registry';
import type { LocalResult, ToolLimits } from '../tool';
import type { MemoryPort } from '../../memory/memory-port';

export interface ToolCall {
  callId: string;
  turn: number;
  tool: unknown;
  input: unknown;
  /** Set when the model's arguments were not valid JSON (input then holds the raw text). */
  parseError?: string;
  /** Cut off by the model's output limit before its arguments ended: refused, never run. */
  truncated?: boolean;
  /** Who proposed it (the `tool.intent`'s actor): the model, or gatehouse itself (its run of the check). */
  actor?: 'model' | 'runtime';
  /** Plan mode: the approved plan's task this call is made in (recorded on its tool.intent). */
  taskId?: string;
}

/** A call's one recorded `tool.observation`: what the model is shown. A pending call has none (see `PendingCall`). */
export interface Observation {
  /** `obs-N`. */
  id: string;
  callId: string;
  tool: string;
  outcome: Exclude<EventDataOf<'tool.observation'>['outcome'], 'pending'>;
  /** Exactly what the model is shown (as recorded in the log). */
  content: string;
  truncated: boolean;
  artifactRef?: string;
}

/** A call that is over: its one recorded observation. */
export interface ObservedCall {
  kind: 'observed';
  observation: Observation;
}

/** A call that waits for this approval request (its own, or a sub-agent's): it stays open, with no observation yet. */
export interface PendingCall {
  kind: 'pending';
  callId: string;
  tool: string;
  requestId: string;
}

/** How a call leaves the pipeline. */
export type CallResult = ObservedCall | PendingCall;

export interface PipelineDeps {
  log: LogPort;
  tracker: StateTracker;
  registry: ToolRegistry;
  /** Tools the model may use this turn. */
  surface: readonly string[];
  policy: ApprovalPolicy;
  sandbox: SandboxPort;
  limits: ToolLimits;
  /**
   * Where an `ask` goes (terminal, headless pause/deny, NATS); without one, an ask is denied (headless runs never
   * hang).
   */
  channel?: ApprovalChannel;
  /** Run ids from the root agent to this one, shown to approvers. */
  lineage?: readonly string[];
  /** Sub-agents: the scope this agent may hand down, and the runner (absent: delegation is off). */
  agent?: () => AgentScope;
  delegate?: (handoff: Handoff, callId: string, signal?: AbortSignal) => Promise<LocalResult>;
  /** Continues the sub-agent of an unfinished delegate call (resume); undefined when there is none to continue. */
  resumeDelegate?: (callId: string, signal?: AbortSignal) => Promise<LocalResult | undefined>;
  /**
   * Plan mode: whether the call fits the plan (the current task's tools and paths; read-only while
   * planning). Problems refuse it at validation stage `plan`, as a deviation (plan/task-scope.ts).
   */
  planScope?: (call: PlanScopedCall) => ValidationError[];
  /** Memory across runs (`--memory`): the only way a record is stored, by a granted `remember` call. */
  memory?: MemoryPort;
}

/** What the plan's scope check sees of a call: its tool, whether it only reads, where its paths resolved. */
export interface PlanScopedCall {
  tool: string;
  readOnly: boolean;
  /** Workspace-relative paths the call resolved to. */
  paths: readonly string[];
  actor: 'model' | 'runtime';
}

/** What authorises an execution: the approval decision (policy) or a person's grant. */
export interface Grant {
  eventId: string;
  executionHash: string;
  by: 'policy' | 'user';
}
