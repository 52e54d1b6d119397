import { isEvent, type EventDataOf, type EventEnvelope, type EventOf, type EventType } from '@gatehouse/shared';
import { applyApproval, cloneApprovalState, initialApprovalState, type ApprovalState } from '../approval/state';

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
  lastSeq: number;
}

export function initialState(): RunState {
  return {
    runId: undefined,
    task: undefined,
    mode: undefined,
    surface: [],
    status: 'new',
    stopReason: undefined,
    toolCalls: 0,
    observations: [],
    fileHashes: {},
    approvals: initialApprovalState(),
    turns: 0,
    tokens: 0,
    lastSeq: -1,
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
      return;
    }
    case 'tool.intent':
      s.toolCalls += 1;
      return;
    case 'model.request':
      s.turns += 1;
      return;
    case 'model.output': {
      const u = event.data.usage;
      s.tokens += u.inputTokens + u.outputTokens;
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
