import {
  isEvent,
  type EventDataOf,
  type EventEnvelope,
  type EventOf,
  type EventType,
  type RunUsage,
} from '@gatehouse/shared';
import { applyApproval, cloneApprovalState, initialApprovalState, type ApprovalState } from '../approval/state';
import { applyPlan, clonePlanState, initialPlanState, type PlanState } from '../plan/plan-state';

export interface ObservationRef {
  id: string;
  callId: string;
  tool: string;
  outcome: EventDataOf<'tool.observation'>['outcome'];
}

/**
 * Run state is a pure fold of the run's events: nothing here is set any other way, so a resumed
 * or replayed run sees exactly what the original saw.
 */
export interface RunState {
  runId: string | undefined;
  task: string | undefined;
  mode: string | undefined;
  surface: readonly string[];
  status: 'new' | 'running' | EventDataOf<'run.completed'>['status'];
  stopReason: string | undefined;
  /** Which rule decided the last run.completed (`budget`, …); cleared when the run is resumed. */
  decidedBy: string | undefined;
  /** tool.intent events so far. */
  toolCalls: number;
  observations: readonly ObservationRef[];
  /**
   * The content hash of each file as this run last saw it (a full read, or its own write or
   * edit). A path a command changed is dropped: the run no longer knows its content.
   */
  fileHashes: Readonly<Record<string, string>>;
  /** Approval requests, grants, and how far each tool call got. */
  approvals: ApprovalState;
  /** model.request events so far (turns taken). */
  turns: number;
  /** Tokens used so far, from model.output usage. */
  tokens: number;
  /** This run's own model usage (its sub-agents' is in their logs: usage/tree-usage.ts). */
  usage: UsageTotals;
  /**
   * Wall-clock time the run has been driven, in ms, over its closed stretches: from each
   * sandbox.started to the run.paused or run.completed that ended it (or, for a run cut short, its
   * last event). Time paused, stopped or dead is not counted; activeWallMs adds the open stretch.
   */
  activeMs: number;
  /** When the open stretch began (epoch ms), undefined between stretches. */
  activeSince: number | undefined;
  /** The last event of the open stretch (epoch ms): where a stretch cut short by a crash ends. */
  lastActiveAt: number | undefined;
  lastSeq: number;
  /** Plan mode (`gatehouse plan`): the plan, the gate and each task's progress (plan/plan-state.ts). */
  plan: PlanState;
}

/** Model usage summed from model.output events; `unpricedTurns` counts turns that used tokens with no price known. */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costUsd: number;
  unpricedTurns: number;
}

export function initialState(): RunState {
  return {
    runId: undefined,
    task: undefined,
    mode: undefined,
    surface: [],
    status: 'new',
    stopReason: undefined,
    decidedBy: undefined,
    toolCalls: 0,
    observations: [],
    fileHashes: {},
    approvals: initialApprovalState(),
    turns: 0,
    tokens: 0,
    usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsd: 0, unpricedTurns: 0 },
    activeMs: 0,
    activeSince: undefined,
    lastActiveAt: undefined,
    lastSeq: -1,
    plan: initialPlanState(),
  };
}

type Mutable<T> = {
  -readonly [K in keyof T]: T[K] extends ReadonlyArray<infer U>
    ? U[]
    : T[K] extends Readonly<Record<string, infer V>>
      ? Record<string, V>
      : T[K];
};

function clone(state: RunState): Mutable<RunState> {
  return {
    ...state,
    surface: [...state.surface],
    observations: [...state.observations],
    fileHashes: { ...state.fileHashes },
    approvals: cloneApprovalState(state.approvals),
    usage: { ...state.usage },
    plan: clonePlanState(state.plan),
  };
}

/**
 * Folds events onto a state without touching the one passed in. Inside, one working copy is
 * updated in place: copying the observation list per event would make a long run quadratic.
 */
export function fold(events: Iterable<EventEnvelope>, from: RunState = initialState()): RunState {
  const s = clone(from);
  for (const e of events) apply(s, e);
  return s;
}

export function reduce(state: RunState, event: EventEnvelope): RunState {
  return fold([event], state);
}

/** Keeps a run's state current as its events are written, at O(1) per event. */
export class StateTracker {
  private readonly s: Mutable<RunState>;
  constructor(events: Iterable<EventEnvelope> = []) {
    this.s = clone(fold(events));
  }
  get state(): RunState {
    return this.s;
  }
  apply(event: EventEnvelope): void {
    apply(this.s, event);
  }
}

function apply(s: Mutable<RunState>, event: EventEnvelope): void {
  // Events arrive in seq order; one already folded (two observers of the same log) is skipped.
  if (event.seq <= s.lastSeq) return;
  s.lastSeq = event.seq;
  applyApproval(s.approvals, event);
  applyPlan(s.plan, event);
  applyWallClock(s, event);
  switch (event.type) {
    case 'run.started': {
      const d = event.data;
      Object.assign(s, { runId: event.runId, task: d.task, mode: d.mode, surface: [...d.surface], status: 'running' });
      return;
    }
    case 'run.completed': {
      const d = event.data;
      s.status = d.status;
      s.stopReason = d.stopReason;
      s.decidedBy = d.decidedBy;
      return;
    }
    case 'run.resumed':
      // A run that stopped on a budget can be resumed (run/resume.ts): it is running again.
      Object.assign(s, { status: 'running', stopReason: undefined, decidedBy: undefined });
      return;
    case 'tool.intent':
      s.toolCalls += 1;
      return;
    case 'model.request':
      s.turns += 1;
      return;
    case 'model.output': {
      const u = event.data.usage;
      s.tokens += u.inputTokens + u.outputTokens;
      s.usage.inputTokens += u.inputTokens;
      s.usage.outputTokens += u.outputTokens;
      s.usage.cachedInputTokens += u.cachedInputTokens ?? 0;
      if (u.costUsd !== undefined) s.usage.costUsd += u.costUsd;
      else if (u.inputTokens + u.outputTokens > 0) s.usage.unpricedTurns += 1;
      return;
    }
    case 'tool.execution.completed': {
      const d = event.data;
      for (const p of d.filesChanged) delete s.fileHashes[p];
      Object.assign(s.fileHashes, d.fileHashes ?? {});
      return;
    }
    case 'tool.observation': {
      const d = event.data;
      s.observations.push({ id: d.observationId, callId: d.callId, tool: d.tool, outcome: d.outcome });
      return;
    }
    default:
      return;
  }
}

/** The id the next observation of this run gets: obs-1, obs-2, … in the order of its tool calls. */
export function nextObservationId(state: RunState): string {
  return `obs-${state.observations.length + 1}`;
}

/** The newest event of a type in a run's events (resume, lineage and delegation all ask this). */
export function lastEvent<T extends EventType>(events: readonly EventEnvelope[], type: T): EventOf<T> | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (isEvent(e, type)) return e;
  }
  return undefined;
}

/** Events written around a stretch, not in it: setup of a resumed run comes before its run.resumed. */
const OUTSIDE_STRETCH = /^(setup\.|preflight\.|egress\.|run\.resumed$)/;

function applyWallClock(s: Mutable<RunState>, event: EventEnvelope): void {
  const at = Date.parse(event.ts);
  if (!Number.isFinite(at)) return;
  const close = (end: number | undefined): void => {
    if (s.activeSince !== undefined) s.activeMs += Math.max(0, (end ?? s.activeSince) - s.activeSince);
    s.activeSince = undefined;
    s.lastActiveAt = undefined;
  };
  if (event.type === 'run.paused' || event.type === 'run.completed') return close(at);
  // A stretch still open here was cut short (a crash): it ends at its own last event.
  if (event.type === 'run.resumed') return close(s.lastActiveAt);
  if (event.type === 'sandbox.started') {
    close(s.lastActiveAt);
    s.activeSince = at;
  }
  if (s.activeSince !== undefined && !OUTSIDE_STRETCH.test(event.type)) s.lastActiveAt = at;
}

/** Wall-clock ms the run has been driven, its open stretch counted up to `now`. */
export function activeWallMs(state: RunState, now = Date.now()): number {
  return state.activeMs + (state.activeSince !== undefined ? Math.max(0, now - state.activeSince) : 0);
}

/** A state's usage as run.completed records it: the cost is null when some turn had no price. */
export function runUsage(t: UsageTotals): RunUsage {
  return {
    inputTokens: t.inputTokens,
    outputTokens: t.outputTokens,
    cachedInputTokens: t.cachedInputTokens,
    costUsd: t.unpricedTurns > 0 ? null : Math.round(t.costUsd * 1e8) / 1e8,
  };
}
