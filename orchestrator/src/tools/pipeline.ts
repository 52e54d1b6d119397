import {
  actionHash,
  errorResult,
  MAX_OUTPUT_CAP,
  newId,
  STREAM_CAP,
  type EventDataOf,
  type EventEnvelope,
  type InvocationResult,
  type ValidationError,
} from '@gatehouse/shared';
import type { StateTracker } from '../events/state';
import { nextObservationId } from '../events/state';
import { usableGrant, type RequestState } from '../approval/state';
import type { ApprovalChannel, ApprovalPrompt } from '../approval/channels/types';
import { previewOf } from '../approval/channels/preview';
import type { ApprovalPolicy } from '../policy/approval-policy';
import { crashPoint } from './crash-points';
import { frame } from './observe/frame';
import { sanitize } from './observe/sanitize';
import { headTail } from './observe/truncate';
import type { LogPort, SandboxPort } from './ports';
import type { ToolRegistry } from './registry';
import type {
  ExecutionPlan,
  LocalResult,
  Observed,
  PeekResult,
  RawResult,
  Tool,
  ToolContext,
  ToolLimits,
} from './tool';
import type { AgentScope, Handoff } from '../agents/handoff';
import { rejectionText, schemaErrors } from './rejection';
import { boundInput, decideCall, realPathLookup, resolvedField, type PathDecision } from './path-decision';
import { argsHashOf, canonicalOrDescribe, jsonSafe } from './recorded-values';
import { checkWorkspacePaths, type ResolvedRef } from './workspace-paths';

export interface ToolCall {
  callId: string;
  turn: number;
  tool: unknown;
  input: unknown;
  /** Set when the model's arguments were not valid JSON (input then holds the raw text). */
  parseError?: string;
}

export interface Observation {
  /** `obs-N`; empty for a pending call (it has no observation yet). */
  id: string;
  callId: string;
  tool: string;
  outcome: EventDataOf<'tool.observation'>['outcome'];
  /** Exactly what the model is shown (as recorded in the log). */
  content: string;
  truncated: boolean;
  artifactRef?: string;
  /** For outcome `pending`: the approval request the run waits for. */
  requestId?: string;
}

export interface PipelineDeps {
  log: LogPort;
  tracker: StateTracker;
  registry: ToolRegistry;
  /** Tools the model may use this turn. */
  surface: readonly string[];
  policy: ApprovalPolicy;
  sandbox: SandboxPort;
  limits: ToolLimits;
  /** Where an `ask` goes (terminal, headless pause/deny, NATS); without one, an ask is denied (headless runs never hang). */
  channel?: ApprovalChannel;
  /** Run ids from the root agent to this one, shown to approvers. */
  lineage?: readonly string[];
  /** Sub-agents: the scope this agent may hand down, and the runner (absent: delegation is off). */
  agent?: () => AgentScope;
  delegate?: (handoff: Handoff, callId: string, signal?: AbortSignal) => Promise<LocalResult>;
  /** Continues the sub-agent of an unfinished delegate call (resume); undefined when there is none to continue. */
  resumeDelegate?: (callId: string, signal?: AbortSignal) => Promise<LocalResult | undefined>;
}

/** What authorises an execution: the approval decision (policy) or a person's grant. */
interface Grant {
  eventId: string;
  executionHash: string;
  by: 'policy' | 'user';
}

const RESULT_CAP = 1024 * 1024;

/**
 * The one path from a model's proposed tool call to what the model is shown:
 * intent → validation (known, surface, schema, semantics) → approval → execution → observation,
 * each stage an event. A call that fails a stage never reaches the next; whatever happens, the
 * call ends in exactly one observation, and bad model input never throws.
 */
export class ToolPipeline {
  constructor(private readonly deps: PipelineDeps) {}

  async run(call: ToolCall, signal?: AbortSignal): Promise<Observation> {
    const toolName =
      typeof call.tool === 'string' ? call.tool.slice(0, 200) : String(canonicalOrDescribe(call.tool)).slice(0, 200);
    // Ids and turns come from model output too: an unusable one is replaced, never thrown on.
    call = {
      ...call,
      callId: /^[\w.:-]{1,128}$/.test(String(call.callId)) ? call.callId : newId('call'),
      turn: Number.isInteger(call.turn) && call.turn >= 0 ? call.turn : 0,
    };
    const intent = this.record('tool.intent', 'model', {
      callId: call.callId,
      turn: call.turn,
      tool: toolName,
      input: jsonSafe(call.input),
    });
    try {
      return await this.stages(call, toolName, intent, signal);
    } catch (e) {
      // Our own failure, not the model's: still exactly one observation, and on record.
      return this.observe({
        callId: call.callId,
        tool: toolName,
        outcome: 'failed',
        body: `internal error in gatehouse: ${(e as Error).message}. The call may not have run.`,
        causationId: intent.id,
      });
    }
  }

  private async stages(
    call: ToolCall,
    toolName: string,
    intent: EventEnvelope,
    signal?: AbortSignal,
  ): Promise<Observation> {
    const { registry, surface } = this.deps;
    const tool = registry.get(toolName);
    if (!tool) {
      return this.reject(call.callId, toolName, intent, 'known', [
        { path: 'tool', code: 'unknown_tool', message: `there is no tool named ${JSON.stringify(toolName)}` },
      ]);
    }
    if (!surface.includes(toolName)) {
      return this.reject(call.callId, toolName, intent, 'surface', [
        { path: 'tool', code: 'tool_not_available', message: `${toolName} is not available in this run` },
      ]);
    }
    if (call.parseError !== undefined) {
      return this.reject(
        call.callId,
        toolName,
        intent,
        'schema',
        [{ path: '', code: 'invalid_json', message: `the arguments are not valid JSON (${call.parseError})` }],
        tool,
      );
    }
    const parsed = tool.input.safeParse(call.input);
    if (!parsed.success) return this.reject(call.callId, toolName, intent, 'schema', schemaErrors(parsed.error), tool);
    const input = parsed.data;
    // Where the call's paths lead is settled first: a path outside the workspace is refused here,
    // and the policy below decides on both the requested and the resolved form.
    const paths = await checkWorkspacePaths(this.deps.sandbox, tool.workspacePaths?.(input) ?? []);
    if (paths.errors.length > 0) {
      return this.reject(call.callId, toolName, intent, 'semantic', paths.errors, tool, paths.resolved);
    }
    const ctx = this.context(paths.resolved);
    let semantic: ValidationError[] = [];
    try {
      semantic = (await tool.validate?.(input, ctx)) ?? [];
    } catch (e) {
      semantic = [
        {
          path: '',
          code: 'validation_unavailable',
          message: `could not check the call against the workspace: ${(e as Error).message}`,
        },
      ];
    }
    if (semantic.length > 0) {
      return this.reject(call.callId, toolName, intent, 'semantic', semantic, tool, paths.resolved);
    }
    const validated = this.record(
      'tool.validation',
      'runtime',
      {
        callId: call.callId,
        ok: true,
        stage: 'semantic',
        errors: [],
        input: jsonSafe(input),
        ...resolvedField(paths.resolved),
      },
      intent.id,
    );

    // Planned before the decision, so the approval records the hash of exactly what will run; that
    // recorded hash is what the daemon checks.
    const plan = tool.plan(input, ctx);
    const executionHash = actionHash({ name: plan.primitive, input: plan.input });
    const actionH = actionHash({ name: toolName, input: boundInput(input, paths.resolved) });
    const { decision, resolvedFrom } = this.decide(tool, input, paths.resolved);
    const approval = this.record(
      'tool.approval',
      'policy',
      {
        callId: call.callId,
        decision: decision.decision,
        policyId: decision.policyId,
        reason: decision.reason,
        actionHash: actionH,
        executionHash,
        risk: decision.risk,
        ...(resolvedFrom ? { resolvedFrom } : {}),
      },
      validated.id,
    );
    if (decision.decision === 'deny') {
      return this.observe({
        callId: call.callId,
        tool: toolName,
        outcome: 'denied',
        body: `denied by policy ${decision.policyId}: ${decision.reason}. It was not run; choose another action.`,
        causationId: approval.id,
        input,
      });
    }
    if (decision.decision === 'allow')
      return this.execute(
        call.callId,
        tool,
        input,
        plan,
        { eventId: approval.id, executionHash, by: 'policy' },
        signal,
      );
    const standing = usableGrant(this.deps.tracker.state.approvals, actionH);
    if (standing)
      return this.execute(
        call.callId,
        tool,
        input,
        plan,
        { eventId: standing.eventId, executionHash, by: 'user' },
        signal,
      );
    const request = this.requestApproval(call.callId, toolName, input, actionH, executionHash, decision, approval.id);
    return this.ask(request, tool, input, plan, signal);
  }

  /**
   * Continues a call a stopped run left unfinished (resume): it never runs anything twice. A call
   * whose execution started but never completed is reported as interrupted, not run again; one
   * that waits for approval runs only with a grant from the log.
   */
  async continueCall(callId: string, signal?: AbortSignal): Promise<Observation | undefined> {
    const state = this.deps.tracker.state.approvals;
    const call = state.calls[callId];
    if (!call || call.observed) return undefined;
    const last = call.started?.eventId ?? call.decision?.eventId;
    const tool = this.deps.registry.get(call.tool);
    if (call.completed && call.result) {
      // It ran and its completion is on record; only the observation was lost. Never run it again.
      const r = call.result;
      const more = r.artifactRefs.length
        ? ` Its full output is stored: read_artifact {"ref": "${r.artifactRefs[0]}"}.`
        : ' Its output was not kept.';
      return this.observe({
        callId,
        tool: call.tool,
        outcome: r.status === 'ok' ? 'ok' : 'failed',
        body: `${call.tool} ran (status ${r.status}${r.exitCode !== null ? `, exit code ${r.exitCode}` : ''}) before gatehouse stopped; it is not run again.${more}`,
        causationId: r.eventId,
        input: call.input,
      });
    }
    if (
      call.started &&
      !call.completed &&
      tool?.name === 'delegate' &&
      this.deps.resumeDelegate &&
      call.validated !== undefined
    ) {
      // A sub-agent that paused (or was cut short) is continued, not started again.
      const t0 = performance.now();
      const result = await this.deps.resumeDelegate(callId, signal);
      if (result) {
        const plan = tool.plan(call.validated, this.context());
        return this.complete(
          callId,
          tool,
          call.validated,
          plan,
          call.started.invocationId,
          call.started.eventId,
          { executor: 'orchestrator', result },
          Math.round((performance.now() - t0) * 100) / 100,
        );
      }
    }
    if (call.started && !call.completed) {
      const completed = this.record(
        'tool.execution.completed',
        'runtime',
        {
          callId,
          invocationId: call.started.invocationId,
          status: 'lost',
          exitCode: null,
          signal: null,
          durationMs: 0,
          bytes: 0,
          truncated: false,
          filesChanged: [],
          artifactRefs: [],
          error: { code: 'interrupted', message: 'the orchestrator stopped while this ran; it is not run again' },
        },
        call.started.eventId,
      );
      return this.observe({
        callId,
        tool: call.tool,
        outcome: 'failed',
        body: `${call.tool} was interrupted: gatehouse stopped while it ran, so its result was not recorded. It is NOT run again automatically (it may have had effects; the workspace was restored from the last state gatehouse saw, so check it before retrying).`,
        causationId: completed.id,
        input: call.input,
      });
    }
    if (!tool || !call.decision || call.validated === undefined) {
      return this.observe({
        callId,
        tool: call.tool,
        outcome: 'failed',
        body: `${call.tool} was interrupted before it was decided; it did not run. Propose it again if it is still needed.`,
        causationId: last ?? null,
        input: call.input,
      });
    }
    const input = call.validated;
    // Resolved again: the plan carries where the paths led, and they must lead there still.
    const paths = await checkWorkspacePaths(this.deps.sandbox, tool.workspacePaths?.(input) ?? []);
    if (paths.errors.length > 0) {
      const why = paths.errors.map((e) => e.message).join('; ');
      const body = `${call.tool} was not run: ${why}. Propose it again.`;
      const causationId = call.decision.eventId;
      return this.observe({ callId, tool: call.tool, outcome: 'failed', body, causationId, input });
    }
    const plan = tool.plan(input, this.context(paths.resolved));
    const executionHash = actionHash({ name: plan.primitive, input: plan.input });
    if (call.decision.executionHash !== undefined && executionHash !== call.decision.executionHash) {
      const body =
        `${call.tool} was not run: what it would execute now differs from what was decided ` +
        '(a path that now resolves elsewhere, or a different gatehouse version). Propose it again.';
      const causationId = call.decision.eventId;
      return this.observe({ callId, tool: call.tool, outcome: 'failed', body, causationId, input });
    }
    if (call.decision.decision === 'allow')
      return this.execute(
        callId,
        tool,
        input,
        plan,
        { eventId: call.decision.eventId, executionHash, by: 'policy' },
        signal,
      );
    if (call.decision.decision === 'deny')
      return this.observe({
        callId,
        tool: call.tool,
        outcome: 'denied',
        body: `${call.tool} was denied by policy. It was not run.`,
        causationId: call.decision.eventId,
        input,
      });
    const grant = usableGrant(state, call.decision.actionHash, call.requestId);
    if (grant)
      return this.execute(callId, tool, input, plan, { eventId: grant.eventId, executionHash, by: 'user' }, signal);
    const request = call.requestId ? state.requests[call.requestId] : undefined;
    if (request?.status === 'denied') return this.deniedByPerson(request, input);
    if (request) return this.ask(request, tool, input, plan, signal);
    // Stopped between the decision and the request: ask now.
    const { decision } = this.decide(tool, input, paths.resolved);
    return this.ask(
      this.requestApproval(
        callId,
        call.tool,
        input,
        call.decision.actionHash,
        executionHash,
        decision,
        call.decision.eventId,
      ),
      tool,
      input,
      plan,
      signal,
    );
  }

  private requestApproval(
    callId: string,
    tool: string,
    input: unknown,
    actionH: string,
    executionHash: string,
    decision: { policyId: string; reason: string; risk: string[]; shape: string },
    causationId: string,
  ): RequestState {
    const requestId = newId('apr');
    const runId = this.deps.tracker.state.runId ?? 'unknown';
    this.record(
      'approval.requested',
      'runtime',
      {
        requestId,
        callId,
        tool,
        input: jsonSafe(input),
        actionHash: actionH,
        executionHash,
        rule: decision.policyId,
        reason: decision.reason,
        risk: decision.risk,
        shape: decision.shape,
        lineage: [...(this.deps.lineage ?? [runId])],
      },
      causationId,
    );
    // On disk before anyone is asked: a pause or a crash from here on leaves the request on record.
    this.deps.log.sync();
    const request = this.deps.tracker.state.approvals.requests[requestId];
    if (!request) throw new Error('approval request was not recorded');
    return request;
  }

  /** Puts a pending request to the channel and acts on the answer; the answer is on record before anything runs. */
  private async ask(
    request: RequestState,
    tool: Tool<unknown>,
    input: unknown,
    plan: ExecutionPlan,
    signal?: AbortSignal,
  ): Promise<Observation> {
    const prompt: ApprovalPrompt = {
      runId: this.deps.tracker.state.runId ?? 'unknown',
      requestId: request.requestId,
      tool: request.tool,
      input,
      actionHash: request.actionHash,
      rule: request.rule,
      reason: request.reason,
      risk: request.risk,
      preview: previewOf(request.tool, input),
      lineage: request.lineage,
    };
    const answer = this.deps.channel
      ? await this.deps.channel.ask(prompt, signal ?? new AbortController().signal)
      : ({
          decision: 'deny',
          approver: 'runtime:no-approver',
          channel: 'headless',
          reason: 'no approver is available in this run',
        } as const);
    if (answer.decision === 'pause') {
      return {
        id: '',
        callId: request.callId,
        tool: request.tool,
        outcome: 'pending',
        content: '',
        truncated: false,
        requestId: request.requestId,
      };
    }
    const requestedEvent = request.eventId;
    if (answer.decision === 'deny') {
      this.record(
        'approval.denied',
        'user',
        {
          requestId: request.requestId,
          callId: request.callId,
          actionHash: request.actionHash,
          approver: answer.approver,
          channel: answer.channel,
          reason: answer.reason,
        },
        requestedEvent,
      );
      const r = this.deps.tracker.state.approvals.requests[request.requestId] ?? request;
      return this.deniedByPerson(r, input);
    }
    const granted = this.record(
      'approval.granted',
      'user',
      {
        requestId: request.requestId,
        callId: request.callId,
        actionHash: request.actionHash,
        executionHash: request.executionHash,
        scope: answer.scope,
        approver: answer.approver,
        channel: answer.channel,
        reason: answer.reason ?? '',
      },
      requestedEvent,
    );
    this.deps.log.sync();
    return this.execute(
      request.callId,
      tool,
      input,
      plan,
      { eventId: granted.id, executionHash: request.executionHash, by: 'user' },
      signal,
    );
  }

  private deniedByPerson(request: RequestState, input: unknown): Observation {
    const who = request.answer?.approver ?? 'the approver';
    return this.observe({
      callId: request.callId,
      tool: request.tool,
      outcome: 'denied',
      body: `${request.tool} was declined by ${who}: ${request.answer?.reason ?? 'no reason given'}. It was not run; choose another way.`,
      causationId: request.answer?.eventId ?? null,
      input,
    });
  }

  private async execute(
    callId: string,
    tool: Tool<unknown>,
    input: unknown,
    plan: ExecutionPlan,
    grant: Grant,
    signal?: AbortSignal,
  ): Promise<Observation> {
    if (signal?.aborted) {
      return this.observe({
        callId,
        tool: tool.name,
        outcome: 'failed',
        body: 'cancelled before it ran: the run is stopping',
        causationId: grant.eventId,
        input,
      });
    }
    crashPoint('before-execution');
    const invocationId = newId('inv');
    const started = this.record(
      'tool.execution.started',
      'runtime',
      {
        callId,
        invocationId,
        executor: plan.executor,
        primitive: plan.primitive,
        input: jsonSafe(plan.input),
        timeoutMs: plan.timeoutMs,
        approvalId: grant.eventId,
        ...(plan.executor === 'sandbox' ? { sandboxId: this.deps.sandbox.sandboxId } : {}),
      },
      grant.eventId,
    );
    // Before anything can change, the decision and what is about to run are on disk. A read
    // changes nothing, so losing its record to a power cut loses nothing; it skips the fsync.
    if (!tool.isReadOnly(input)) this.deps.log.sync();
    const t0 = performance.now();
    const raw = await this.invoke(plan, callId, invocationId, grant, signal);
    crashPoint('after-execution');
    const durationMs = Math.round((performance.now() - t0) * 100) / 100;
    return this.complete(callId, tool, input, plan, invocationId, started.id, raw, durationMs);
  }

  /** A result becomes a completion event and the one observation (or a pending call: a paused sub-agent). */
  private complete(
    callId: string,
    tool: Tool<unknown>,
    input: unknown,
    plan: ExecutionPlan,
    invocationId: string,
    startedId: string,
    raw: RawResult,
    durationMs: number,
  ): Observation {
    if (raw.executor === 'orchestrator' && raw.result.pending) {
      // A sub-agent waits for approval: this call stays open (no completion) and the run pauses too.
      return {
        id: '',
        callId,
        tool: tool.name,
        outcome: 'pending',
        content: '',
        truncated: false,
        requestId: raw.result.pending.requestId,
      };
    }
    const observed = safeObserve(tool, input, raw, this.context());
    // Redacted before it is cut: a cut through a secret would leave a fragment no pattern matches.
    const text = this.deps.log.redact(
      sanitize(observed.text) + (plan.executor === 'sandbox' && plan.note ? `\n[${plan.note}]` : ''),
    );
    const artifact = text.length > this.deps.limits.observationBudget ? this.deps.log.artifacts.put(text) : undefined;
    const artifactRef = artifact?.ref;
    const r = raw.executor === 'sandbox' ? raw.result : undefined;
    const completed = this.record(
      'tool.execution.completed',
      plan.executor === 'sandbox' ? 'sandbox' : 'runtime',
      {
        callId,
        invocationId,
        status:
          raw.executor === 'sandbox'
            ? raw.lost !== undefined
              ? 'lost'
              : raw.result.status
            : raw.result.ok
              ? 'ok'
              : 'failed',
        exitCode: r?.exitCode ?? null,
        signal: r?.signal ?? null,
        durationMs,
        bytes: r?.bytes ?? (raw.executor === 'orchestrator' ? Buffer.byteLength(raw.result.output) : 0),
        truncated: r?.truncated ?? false,
        filesChanged: r?.filesChanged ?? [],
        artifactRefs: artifactRef ? [artifactRef] : [],
        ...(artifact ? { artifacts: [{ ref: artifact.ref, sha256: artifact.sha256, bytes: artifact.bytes }] } : {}),
        ...(observed.fileHashes ? { fileHashes: observed.fileHashes } : {}),
        ...(r?.error
          ? { error: { code: r.error.code, message: r.error.message } }
          : raw.executor === 'orchestrator' && raw.result.error
            ? { error: raw.result.error }
            : {}),
      },
      startedId,
    );
    crashPoint('after-completion');
    const shown = headTail(text, this.deps.limits.observationBudget, artifactRef);
    return this.observe({
      callId,
      tool: tool.name,
      outcome: observed.ok ? 'ok' : 'failed',
      body: shown.text,
      causationId: completed.id,
      external: observed.external,
      truncated: shown.truncated,
      input,
      ...(artifactRef ? { artifactRef } : {}),
    });
  }

  private async invoke(
    plan: ExecutionPlan,
    callId: string,
    invocationId: string,
    grant: Grant,
    signal?: AbortSignal,
  ): Promise<RawResult> {
    if (plan.executor === 'orchestrator') {
      const delegate = this.deps.delegate;
      return {
        executor: 'orchestrator',
        result: await plan.run({
          readArtifact: (ref, offset, limit) => this.deps.log.artifacts.read(ref, offset, limit),
          ...(delegate ? { delegate: (h: Handoff) => delegate(h, callId, signal) } : {}),
        }),
      };
    }
    const chunks: string[] = [];
    let kept = 0;
    let complete = true;
    try {
      const result = await this.deps.sandbox.invoke(plan.primitive, plan.input, {
        approval: { id: grant.eventId, actionHash: grant.executionHash, by: grant.by },
        invocationId,
        intentId: invocationId,
        timeoutMs: plan.timeoutMs,
        outputCap: RESULT_CAP,
        onOutput: (c) => {
          if (kept + c.data.length > STREAM_CAP) complete = false;
          else {
            chunks.push(c.data);
            kept += c.data.length;
          }
        },
        ...(signal ? { signal } : {}),
      });
      // The streamed copy replaces the daemon's head and tail only if it is the whole output: every
      // byte arrived (the daemon stops streaming at its cap, and core NATS may drop a chunk).
      const streamed = chunks.join('');
      const fullOutput =
        result.truncated && complete && Buffer.byteLength(streamed) === result.bytes ? streamed : undefined;
      return { executor: 'sandbox', result, ...(fullOutput !== undefined ? { fullOutput } : {}) };
    } catch (e) {
      const message = (e as Error).message;
      return {
        executor: 'sandbox',
        result: lostResult(invocationId, this.deps.sandbox.sandboxId, message),
        lost: message,
      };
    }
  }

  /** The policy on the call as requested and on where its paths lead; strictest wins (path-decision.ts). */
  private decide(tool: Tool<unknown>, input: unknown, resolved: readonly ResolvedRef[]): PathDecision {
    return decideCall(this.deps.policy, this.deps.tracker.state.approvals.approvedShapes, tool, input, resolved);
  }

  private reject(
    callId: string,
    toolName: string,
    intent: EventEnvelope,
    stage: EventDataOf<'tool.validation'>['stage'],
    errors: ValidationError[],
    tool?: Tool<unknown>,
    resolved: readonly ResolvedRef[] = [],
  ): Observation {
    const data = { callId, ok: false, stage, errors, ...resolvedField(resolved) };
    const validation = this.record('tool.validation', 'runtime', data, intent.id);
    const text = rejectionText(stage, toolName, errors, {
      surface: this.deps.surface,
      tool,
      registry: this.deps.registry,
    });
    return this.observe({ callId, tool: toolName, outcome: 'rejected', body: text, causationId: validation.id });
  }

  private observe(o: {
    callId: string;
    tool: string;
    outcome: Observation['outcome'];
    body: string;
    causationId: string | null;
    external?: boolean;
    truncated?: boolean;
    artifactRef?: string;
    input?: unknown;
  }): Observation {
    const id = nextObservationId(this.deps.tracker.state);
    const provenance = {
      observationId: id,
      tool: o.tool,
      outcome: o.outcome,
      argsHash: argsHashOf(o.input),
      at: new Date().toISOString(),
    };
    const content = frame(o.body, provenance, o.external ?? false);
    const truncated = o.truncated ?? false;
    const event = this.record(
      'tool.observation',
      'runtime',
      {
        callId: o.callId,
        observationId: id,
        tool: o.tool,
        outcome: o.outcome,
        content,
        truncated,
        ...(o.artifactRef ? { artifactRef: o.artifactRef } : {}),
      },
      o.causationId,
    );
    // What the log holds (after secret redaction) is what the model gets.
    const recorded = event.data as EventDataOf<'tool.observation'>;
    return {
      id,
      callId: o.callId,
      tool: o.tool,
      outcome: o.outcome,
      content: recorded.content,
      truncated,
      ...(o.artifactRef ? { artifactRef: o.artifactRef } : {}),
    };
  }

  private context(resolved: readonly ResolvedRef[] = []): ToolContext {
    return {
      state: this.deps.tracker.state,
      limits: this.deps.limits,
      peek: (p) => this.peek(p),
      realPath: realPathLookup(resolved),
      ...(this.deps.agent ? { agent: this.deps.agent } : {}),
    };
  }

  /** A runtime read for semantic checks: full content and hash, never recorded as a tool call. */
  private async peek(path: string): Promise<PeekResult> {
    const input = { path };
    const r = await this.deps.sandbox.invoke('read_file', input, {
      approval: { id: 'runtime:validation-peek', actionHash: actionHash({ name: 'read_file', input }), by: 'runtime' },
      timeoutMs: 30_000,
      outputCap: MAX_OUTPUT_CAP,
    });
    if (r.status === 'ok' && r.data?.kind === 'read_file')
      return { exists: true, isDirectory: false, sha256: r.data.sha256, ...(r.truncated ? {} : { content: r.output }) };
    if (r.error?.code === 'not_found') return { exists: false };
    if (r.error?.code === 'is_directory') return { exists: true, isDirectory: true };
    if (r.error?.code === 'binary_file') return { exists: true, isDirectory: false };
    throw new Error(r.error?.message ?? r.status);
  }

  private record<T extends Parameters<LogPort['append']>[0]>(
    type: T,
    actor: Parameters<LogPort['append']>[1],
    data: EventDataOf<T>,
    causationId: string | null = null,
  ): EventEnvelope {
    const event = this.deps.log.append(type, actor, data, { causationId });
    this.deps.tracker.apply(event);
    return event;
  }
}

function safeObserve(tool: Tool<unknown>, input: unknown, raw: RawResult, ctx: ToolContext): Observed {
  try {
    return tool.observe(input, raw, ctx);
  } catch (e) {
    return { ok: false, text: `the result could not be read: ${(e as Error).message}`, external: false };
  }
}

function lostResult(invocationId: string, sandboxId: string, message: string): InvocationResult {
  return errorResult({
    invocationId,
    runId: 'unknown',
    sandboxId,
    status: 'failed',
    code: 'internal',
    message: `the sandbox did not return a result: ${message}`,
  });
}
