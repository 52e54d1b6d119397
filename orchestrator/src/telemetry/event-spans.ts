import type { EventEnvelope, EventOf } from '@gatehouse/shared';
import { APPROVAL_SPAN, GATEHOUSE as G, GEN_AI, OPERATION } from './genai-attributes';
import { approvalAttributes, chatEnd, chatStart, modelParts, runEnd } from './span-attributes';
import type { SpanHandle, SpanPort } from './span-port';
import { runSpanIdFor, traceIdFor } from './trace-ids';

interface RunInfo {
  rootRunId: string;
  parentRunId: string | null;
  depth: number;
  model: string;
  mode: string;
  span?: SpanHandle;
  chat?: SpanHandle;
  /** Ended or paused in this process: later events of it (a child's copy of agent.completed) open nothing. */
  closed?: boolean;
  /** Decisions written between a pause and this process (by `gatehouse approve`): no process exported them. */
  unexported: Array<EventOf<'approval.granted' | 'approval.denied'>>;
}

interface CallInfo {
  runId: string;
  callId: string;
  tool: string;
  span?: SpanHandle;
  /** A person's decision being waited for (from `approval.requested`). */
  wait?: { span: SpanHandle; rule: string; actionHash: string };
  /** The rule that asked, when the request is in a resumed run's history. */
  askedBy?: string;
}

/**
 * Turns a tree's events, as they are appended, into spans per the GenAI semantic conventions:
 * `invoke_agent {agent}` per run (a sub-agent's under its parent's delegate call), `chat {model}` per
 * model call, `execute_tool {tool}` per call and a `gatehouse.approval` span per decision. Spans
 * take their times from the events.
 *
 * Events older than `liveSince` (a resumed run's history, replayed to onEvent first) were exported
 * by the process that wrote them: they only rebuild what is needed to continue (who is whose child,
 * which calls are open), except decisions taken while the run was paused, which no run process saw.
 * A resumed run gets a new `invoke_agent` span in the same trace (./trace-ids.ts); a call that was
 * open at the pause gets a new `execute_tool` span, marked `gatehouse.resumed`.
 *
 * No prompt, model output, tool input or tool output goes into an attribute: only names, ids,
 * hashes, counts and outcomes.
 */
export class EventSpans {
  readonly #runs = new Map<string, RunInfo>();
  readonly #calls = new Map<string, CallInfo>();
  /** A sub-agent's run id → its parent's run and delegate call. */
  readonly #childOf = new Map<string, { parentRunId: string; callId: string }>();

  constructor(
    private readonly port: SpanPort,
    private readonly liveSince: number,
  ) {}

  onEvent(e: EventEnvelope): void {
    if (e.type === 'run.started') this.#register(e);
    if (e.type === 'agent.spawned' && e.runId === e.data.parentRunId)
      this.#childOf.set(e.data.childRunId, { parentRunId: e.runId, callId: e.data.callId });
    const run = this.#runs.get(e.runId);
    if (!run) return; // a log that did not start with run.started: nothing to attach spans to
    if (Date.parse(e.ts) < this.liveSince) return this.#history(run, e);
    if (run.closed) return;
    const span = this.#runSpan(e.runId, e.seq, new Date(e.ts));
    this.#live(run, span, e);
  }

  /** Ends whatever is still open (the process is ending without the runs' own ends), marked unfinished. */
  endAll(at: Date): void {
    for (const call of this.#calls.values()) this.#endCall(call, at, { [G.unfinished]: true });
    for (const run of this.#runs.values()) {
      run.chat?.set({ [G.unfinished]: true });
      run.chat?.end(at);
      run.chat = undefined;
      run.span?.set({ [G.unfinished]: true });
      run.span?.end(at);
      run.span = undefined;
    }
  }

  #register(e: EventOf<'run.started'>): void {
    const lineage = e.data.lineage ?? [e.runId];
    this.#runs.set(e.runId, {
      rootRunId: lineage[0] ?? e.runId,
      parentRunId: e.parentRunId,
      depth: Math.max(0, lineage.length - 1),
      model: e.data.model ?? 'unknown',
      mode: e.data.mode,
      unexported: [],
    });
  }

  #history(run: RunInfo, e: EventEnvelope): void {
    switch (e.type) {
      case 'tool.intent':
        this.#calls.set(key(e.runId, e.data.callId), { runId: e.runId, callId: e.data.callId, tool: e.data.tool });
        break;
      case 'tool.observation':
        if (e.data.outcome !== 'pending') this.#calls.delete(key(e.runId, e.data.callId));
        break;
      case 'approval.requested': {
        const call = this.#calls.get(key(e.runId, e.data.callId));
        if (call) call.askedBy = e.data.rule;
        break;
      }
      case 'approval.granted':
      case 'approval.denied':
        run.unexported.push(e);
        break;
      case 'run.paused':
        run.unexported = [];
        break;
    }
  }

  #live(run: RunInfo, span: SpanHandle, e: EventEnvelope): void {
    const at = new Date(e.ts);
    switch (e.type) {
      case 'model.request':
        run.chat?.end(at);
        run.chat = this.port.start({ ...chatStart(run.model, e.data), start: at, parent: span });
        return;
      case 'model.output':
        if (!run.chat) return;
        chatEnd(run.chat, e.data);
        run.chat.end(at);
        run.chat = undefined;
        return;
      case 'tool.intent':
        this.#startCall(e.runId, e.data.callId, e.data.tool, at);
        return;
      case 'run.paused':
      case 'run.completed':
        return this.#endRun(run, e, at);
      default:
        return this.#callEvent(e, at);
    }
  }

  /** Events of one call: validation, decisions, execution, sub-agents, observation. */
  #callEvent(e: EventEnvelope, at: Date): void {
    if (!('callId' in (e.data as object))) return;
    const callId = (e.data as { callId: string }).callId;
    if (e.type === 'agent.spawned' || e.type === 'agent.completed') {
      if (e.runId !== e.data.parentRunId) return; // the child's copy: the parent's is the one on its call
    }
    const call = this.#callSpan(e.runId, callId, at);
    if (!call?.span) return;
    const span = call.span;
    switch (e.type) {
      case 'tool.validation':
        if (!e.data.ok) span.fail('validation', `invalid input (${e.data.stage})`);
        if (!e.data.ok) span.set({ [G.validationStage]: e.data.stage });
        return;
      case 'tool.approval':
        return this.#decision(span, at, at, {
          decision: e.data.decision,
          rule: e.data.policyId,
          approver: 'policy',
          actionHash: e.data.actionHash,
          ...(e.data.risk ? { risk: e.data.risk } : {}),
        });
      case 'approval.requested': {
        const attrs = approvalAttributes({ decision: 'pending', rule: e.data.rule, actionHash: e.data.actionHash });
        const wait = this.port.start({
          name: APPROVAL_SPAN,
          kind: 'internal',
          start: at,
          parent: span,
          attributes: attrs,
        });
        wait.set({ [G.requestId]: e.data.requestId });
        call.wait = { span: wait, rule: e.data.rule, actionHash: e.data.actionHash };
        return;
      }
      case 'approval.granted':
      case 'approval.denied':
        return this.#personDecision(call, e, at);
      case 'agent.spawned':
        span.set({ [G.childRunId]: e.data.childRunId });
        return;
      case 'agent.completed':
        span.set({ [G.childRunId]: e.data.childRunId, [G.childStatus]: e.data.status });
        return;
      case 'tool.execution.started':
        span.set({ [G.executor]: e.data.executor, [G.primitive]: e.data.primitive });
        return;
      case 'tool.execution.completed':
        span.set({ [G.executionStatus]: e.data.status });
        if (e.data.exitCode !== null) span.set({ [G.exitCode]: e.data.exitCode });
        if (e.data.error) span.set({ [G.errorCode]: e.data.error.code });
        return;
      case 'tool.observation':
        if (e.data.outcome === 'pending') return;
        span.set({ [G.outcome]: e.data.outcome });
        if (e.data.outcome !== 'ok') span.fail(e.data.outcome, `the call ended ${e.data.outcome}`);
        this.#endCall(call, at);
        this.#calls.delete(key(e.runId, callId));
        return;
    }
  }

  #personDecision(call: CallInfo, e: EventOf<'approval.granted' | 'approval.denied'>, at: Date): void {
    const decided = {
      approver: e.data.approver,
      channel: e.data.channel,
      requestId: e.data.requestId,
      ...(e.type === 'approval.granted' ? { scope: e.data.scope } : {}),
    };
    const decision = e.type === 'approval.granted' ? 'allow' : 'deny';
    if (call.wait) {
      call.wait.span.set(
        approvalAttributes({ ...decided, decision, rule: call.wait.rule, actionHash: e.data.actionHash }),
      );
      call.wait.span.end(at);
      call.wait = undefined;
    } else if (call.span) {
      const rule = call.askedBy ?? 'unknown';
      this.#decision(call.span, at, at, { ...decided, decision, rule, actionHash: e.data.actionHash });
    }
  }

  #decision(parent: SpanHandle, start: Date, end: Date, d: Parameters<typeof approvalAttributes>[0]): void {
    const span = this.port.start({
      name: APPROVAL_SPAN,
      kind: 'internal',
      start,
      parent,
      attributes: approvalAttributes(d),
    });
    span.end(end);
  }

  #startCall(runId: string, callId: string, tool: string, at: Date, resumed = false): CallInfo {
    const run = this.#runs.get(runId);
    const call: CallInfo = this.#calls.get(key(runId, callId)) ?? { runId, callId, tool };
    call.span = this.port.start({
      name: `${OPERATION.executeTool} ${tool}`,
      kind: 'internal',
      start: at,
      ...(run?.span ? { parent: run.span } : {}),
      attributes: {
        [GEN_AI.operationName]: OPERATION.executeTool,
        [GEN_AI.toolName]: tool,
        [GEN_AI.toolCallId]: callId,
        [GEN_AI.toolType]: 'function',
        ...(resumed ? { [G.resumed]: true } : {}),
      },
    });
    this.#calls.set(key(runId, callId), call);
    return call;
  }

  /** The open span of a call; a call opened before this process started gets a new one. */
  #callSpan(runId: string, callId: string, at: Date): CallInfo | undefined {
    const call = this.#calls.get(key(runId, callId));
    if (!call) return undefined;
    if (call.span) return call;
    if (!this.#runs.get(runId)?.span) return undefined;
    return this.#startCall(runId, callId, call.tool, at, true);
  }

  #endCall(call: CallInfo, at: Date, attrs?: Record<string, boolean>): void {
    if (call.wait) {
      call.wait.span.set(attrs ?? {});
      call.wait.span.end(at);
      call.wait = undefined;
    }
    if (!call.span) return;
    if (attrs) call.span.set(attrs);
    call.span.end(at);
    call.span = undefined;
  }

  #endRun(run: RunInfo, e: EventOf<'run.paused' | 'run.completed'>, at: Date): void {
    const paused = e.type === 'run.paused';
    for (const call of this.#calls.values()) {
      if (call.runId !== e.runId) continue;
      this.#endCall(call, at, paused ? { [G.paused]: true } : { [G.unfinished]: true });
      if (!paused) this.#calls.delete(key(call.runId, call.callId));
    }
    run.chat?.end(at);
    run.chat = undefined;
    run.closed = true;
    if (!run.span) return;
    runEnd(run.span, e);
    run.span.end(at);
    run.span = undefined;
  }

  /** The run's open `invoke_agent` span, started at its first event in this process. */
  #runSpan(runId: string, seq: number, at: Date): SpanHandle {
    const run = this.#runs.get(runId)!;
    if (run.span) return run.span;
    const link = this.#childOf.get(runId);
    const parent = link ? this.#callSpan(link.parentRunId, link.callId, at)?.span : undefined;
    const { provider, model } = modelParts(run.model);
    const agent = run.parentRunId ? 'sub-agent' : 'gatehouse';
    run.span = this.port.start({
      name: `${OPERATION.invokeAgent} ${agent}`,
      kind: 'internal',
      start: at,
      ...(parent ? { parent } : { traceId: traceIdFor(run.rootRunId) }),
      spanId: runSpanIdFor(runId, seq),
      attributes: {
        [GEN_AI.operationName]: OPERATION.invokeAgent,
        [GEN_AI.providerName]: provider,
        [GEN_AI.agentName]: agent,
        [GEN_AI.requestModel]: model,
        [GEN_AI.conversationId]: runId,
        [G.runId]: runId,
        [G.rootRunId]: run.rootRunId,
        [G.depth]: run.depth,
        [G.mode]: run.mode,
        ...(run.parentRunId ? { [G.parentRunId]: run.parentRunId } : {}),
        ...(seq > 0 ? { [G.resumed]: true } : {}),
      },
    });
    // Decisions taken while it was paused, which no run process exported: now, on their calls.
    const unexported = run.unexported;
    run.unexported = [];
    for (const d of unexported) {
      const call = this.#callSpan(runId, d.data.callId, new Date(d.ts));
      if (call) this.#personDecision(call, d, new Date(d.ts));
    }
    return run.span;
  }
}

function key(runId: string, callId: string): string {
  return `${runId}\0${callId}`;
}
