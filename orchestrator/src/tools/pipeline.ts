import { actionHash, canonicalJson, errorResult, MAX_OUTPUT_CAP, newId, STREAM_CAP, type EventDataOf, type EventEnvelope, type InvocationResult, type ValidationError } from '@gatehouse/shared';
import type { StateTracker } from '../events/state';
import { nextObservationId } from '../events/state';
import type { ApprovalPolicy } from '../policy/interim';
import { frame } from './observe/frame';
import { sanitize } from './observe/sanitize';
import { headTail } from './observe/truncate';
import type { LogPort, SandboxPort } from './ports';
import type { ToolRegistry } from './registry';
import type { ExecutionPlan, Observed, PeekResult, RawResult, Tool, ToolContext, ToolLimits } from './tool';
import { rejectionText, schemaErrors } from './rejection';

export interface ToolCall {
  callId: string;
  turn: number;
  tool: unknown;
  input: unknown;
  /** Set when the model's arguments were not valid JSON (input then holds the raw text). */
  parseError?: string;
}

export interface Observation {
  id: string;
  callId: string;
  tool: string;
  outcome: EventDataOf<'tool.observation'>['outcome'];
  /** Exactly what the model is shown (as recorded in the log). */
  content: string;
  truncated: boolean;
  artifactRef?: string;
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
  /** Answers an `ask`; without one, an ask is not run (headless runs never hang). */
  approver?: (request: { tool: string; input: unknown; reason: string }) => Promise<{ approved: boolean; approver: string; reason: string }>;
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
    const toolName = typeof call.tool === 'string' ? call.tool.slice(0, 200) : String(canonicalOrDescribe(call.tool)).slice(0, 200);
    // Ids and turns come from model output too: an unusable one is replaced, never thrown on.
    call = { ...call, callId: /^[\w.:-]{1,128}$/.test(String(call.callId)) ? call.callId : newId('call'), turn: Number.isInteger(call.turn) && call.turn >= 0 ? call.turn : 0 };
    const intent = this.record('tool.intent', 'model', { callId: call.callId, turn: call.turn, tool: toolName, input: jsonSafe(call.input) });
    try {
      return await this.stages(call, toolName, intent, signal);
    } catch (e) {
      // Our own failure, not the model's: still exactly one observation, and on record.
      return this.observe({ callId: call.callId, tool: toolName, outcome: 'failed', body: `internal error in gatehouse: ${(e as Error).message}. The call may not have run.`, causationId: intent.id });
    }
  }

  private async stages(call: ToolCall, toolName: string, intent: EventEnvelope, signal?: AbortSignal): Promise<Observation> {
    const { registry, surface } = this.deps;
    const tool = registry.get(toolName);
    if (!tool) {
      return this.reject(call.callId, toolName, intent, 'known', [{ path: 'tool', code: 'unknown_tool', message: `there is no tool named ${JSON.stringify(toolName)}` }]);
    }
    if (!surface.includes(toolName)) {
      return this.reject(call.callId, toolName, intent, 'surface', [{ path: 'tool', code: 'tool_not_available', message: `${toolName} is not available in this run` }]);
    }
    if (call.parseError !== undefined) {
      return this.reject(call.callId, toolName, intent, 'schema', [{ path: '', code: 'invalid_json', message: `the arguments are not valid JSON (${call.parseError})` }], tool);
    }
    const parsed = tool.input.safeParse(call.input);
    if (!parsed.success) return this.reject(call.callId, toolName, intent, 'schema', schemaErrors(parsed.error), tool);
    const input = parsed.data;
    const ctx = this.context();
    let semantic: ValidationError[] = [];
    try {
      semantic = (await tool.validate?.(input, ctx)) ?? [];
    } catch (e) {
      semantic = [{ path: '', code: 'validation_unavailable', message: `could not check the call against the workspace: ${(e as Error).message}` }];
    }
    if (semantic.length > 0) return this.reject(call.callId, toolName, intent, 'semantic', semantic, tool);
    const validated = this.record('tool.validation', 'runtime', { callId: call.callId, ok: true, stage: 'semantic', errors: [], input: jsonSafe(input) }, intent.id);

    // Planned before the decision, so the approval records the hash of exactly what will run; that
    // recorded hash is what the daemon checks.
    const plan = tool.plan(input, ctx);
    const executionHash = actionHash({ name: plan.primitive, input: plan.input });
    const decision = this.deps.policy.decide({ tool: toolName, input, readOnly: tool.isReadOnly(input), sideEffect: tool.sideEffect });
    const approval = this.record(
      'tool.approval',
      'policy',
      { callId: call.callId, decision: decision.decision, policyId: decision.policyId, reason: decision.reason, actionHash: actionHash({ name: toolName, input }), executionHash },
      validated.id,
    );
    if (decision.decision === 'deny') {
      return this.observe({ callId: call.callId, tool: toolName, outcome: 'denied', body: `denied by policy ${decision.policyId}: ${decision.reason}. It was not run; choose another action.`, causationId: approval.id, input });
    }
    let grant: EventEnvelope = approval;
    let by: 'policy' | 'user' = 'policy';
    if (decision.decision === 'ask') {
      if (!this.deps.approver) {
        return this.observe({ callId: call.callId, tool: toolName, outcome: 'denied', body: `${toolName} needs approval (${decision.reason}); no approver is available in this run. It was not run.`, causationId: approval.id, input });
      }
      const requested = this.record('approval.requested', 'runtime', { callId: call.callId, tool: toolName, executionHash, reason: decision.reason }, approval.id);
      const answer = await this.deps.approver({ tool: toolName, input, reason: decision.reason });
      // The person's decision is on record before anything runs.
      grant = this.record(answer.approved ? 'approval.granted' : 'approval.denied', 'user', { callId: call.callId, executionHash, approver: answer.approver, reason: answer.reason }, requested.id);
      if (!answer.approved) {
        return this.observe({ callId: call.callId, tool: toolName, outcome: 'denied', body: `${toolName} was declined by ${answer.approver}: ${answer.reason}. It was not run.`, causationId: grant.id, input });
      }
      by = 'user';
    }
    return this.execute(call.callId, tool, input, plan, { event: grant, executionHash, by }, signal);
  }

  private async execute(
    callId: string,
    tool: Tool<unknown>,
    input: unknown,
    plan: ExecutionPlan,
    grant: { event: EventEnvelope; executionHash: string; by: 'policy' | 'user' },
    signal?: AbortSignal,
  ): Promise<Observation> {
    const approval = grant.event;
    if (signal?.aborted) {
      return this.observe({ callId, tool: tool.name, outcome: 'failed', body: 'cancelled before it ran: the run is stopping', causationId: approval.id, input });
    }
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
        approvalId: approval.id,
        ...(plan.executor === 'sandbox' ? { sandboxId: this.deps.sandbox.sandboxId } : {}),
      },
      approval.id,
    );
    // Before anything can change, the decision and what is about to run are on disk. A read
    // changes nothing, so losing its record to a power cut loses nothing; it skips the fsync.
    if (!tool.isReadOnly(input)) this.deps.log.sync();
    const t0 = performance.now();
    const raw = await this.invoke(plan, invocationId, grant, signal);
    const durationMs = Math.round((performance.now() - t0) * 100) / 100;

    const observed = safeObserve(tool, input, raw, this.context());
    // Redacted before it is cut: a cut through a secret would leave a fragment no pattern matches.
    const text = this.deps.log.redact(sanitize(observed.text) + (plan.executor === 'sandbox' && plan.note ? `\n[${plan.note}]` : ''));
    const artifactRef = text.length > this.deps.limits.observationBudget ? this.deps.log.artifacts.put(text).ref : undefined;
    const r = raw.executor === 'sandbox' ? raw.result : undefined;
    const completed = this.record(
      'tool.execution.completed',
      plan.executor === 'sandbox' ? 'sandbox' : 'runtime',
      {
        callId,
        invocationId,
        status: raw.executor === 'sandbox' ? (raw.lost !== undefined ? 'lost' : raw.result.status) : raw.result.ok ? 'ok' : 'failed',
        exitCode: r?.exitCode ?? null,
        signal: r?.signal ?? null,
        durationMs,
        bytes: r?.bytes ?? (raw.executor === 'orchestrator' ? Buffer.byteLength(raw.result.output) : 0),
        truncated: r?.truncated ?? false,
        filesChanged: r?.filesChanged ?? [],
        artifactRefs: artifactRef ? [artifactRef] : [],
        ...(observed.fileHashes ? { fileHashes: observed.fileHashes } : {}),
        ...(r?.error ? { error: { code: r.error.code, message: r.error.message } } : raw.executor === 'orchestrator' && raw.result.error ? { error: raw.result.error } : {}),
      },
      started.id,
    );
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

  private async invoke(plan: ExecutionPlan, invocationId: string, grant: { event: EventEnvelope; executionHash: string; by: 'policy' | 'user' }, signal?: AbortSignal): Promise<RawResult> {
    if (plan.executor === 'orchestrator') {
      return { executor: 'orchestrator', result: await plan.run({ readArtifact: (ref, offset, limit) => this.deps.log.artifacts.read(ref, offset, limit) }) };
    }
    const chunks: string[] = [];
    let kept = 0;
    let complete = true;
    try {
      const result = await this.deps.sandbox.invoke(plan.primitive, plan.input, {
        approval: { id: grant.event.id, actionHash: grant.executionHash, by: grant.by },
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
      const fullOutput = result.truncated && complete && Buffer.byteLength(streamed) === result.bytes ? streamed : undefined;
      return { executor: 'sandbox', result, ...(fullOutput !== undefined ? { fullOutput } : {}) };
    } catch (e) {
      const message = (e as Error).message;
      return { executor: 'sandbox', result: lostResult(invocationId, this.deps.sandbox.sandboxId, message), lost: message };
    }
  }

  private reject(callId: string, toolName: string, intent: EventEnvelope, stage: EventDataOf<'tool.validation'>['stage'], errors: ValidationError[], tool?: Tool<unknown>): Observation {
    const validation = this.record('tool.validation', 'runtime', { callId, ok: false, stage, errors }, intent.id);
    const text = rejectionText(stage, toolName, errors, { surface: this.deps.surface, tool, registry: this.deps.registry });
    return this.observe({ callId, tool: toolName, outcome: 'rejected', body: text, causationId: validation.id });
  }

  private observe(o: {
    callId: string;
    tool: string;
    outcome: Observation['outcome'];
    body: string;
    causationId: string;
    external?: boolean;
    truncated?: boolean;
    artifactRef?: string;
    input?: unknown;
  }): Observation {
    const id = nextObservationId(this.deps.tracker.state);
    const provenance = { observationId: id, tool: o.tool, outcome: o.outcome, argsHash: argsHashOf(o.input), at: new Date().toISOString() };
    const content = frame(o.body, provenance, o.external ?? false);
    const truncated = o.truncated ?? false;
    const event = this.record(
      'tool.observation',
      'runtime',
      { callId: o.callId, observationId: id, tool: o.tool, outcome: o.outcome, content, truncated, ...(o.artifactRef ? { artifactRef: o.artifactRef } : {}) },
      o.causationId,
    );
    // What the log holds (after secret redaction) is what the model gets.
    const recorded = event.data as EventDataOf<'tool.observation'>;
    return { id, callId: o.callId, tool: o.tool, outcome: o.outcome, content: recorded.content, truncated, ...(o.artifactRef ? { artifactRef: o.artifactRef } : {}) };
  }

  private context(): ToolContext {
    return { state: this.deps.tracker.state, limits: this.deps.limits, peek: (p) => this.peek(p) };
  }

  /** A runtime read for semantic checks: full content and hash, never recorded as a tool call. */
  private async peek(path: string): Promise<PeekResult> {
    const input = { path };
    const r = await this.deps.sandbox.invoke('read_file', input, {
      approval: { id: 'runtime:validation-peek', actionHash: actionHash({ name: 'read_file', input }), by: 'runtime' },
      timeoutMs: 30_000,
      outputCap: MAX_OUTPUT_CAP,
    });
    if (r.status === 'ok' && r.data?.kind === 'read_file') return { exists: true, isDirectory: false, sha256: r.data.sha256, ...(r.truncated ? {} : { content: r.output }) };
    if (r.error?.code === 'not_found') return { exists: false };
    if (r.error?.code === 'is_directory') return { exists: true, isDirectory: true };
    if (r.error?.code === 'binary_file') return { exists: true, isDirectory: false };
    throw new Error(r.error?.message ?? r.status);
  }

  private record<T extends Parameters<LogPort['append']>[0]>(type: T, actor: Parameters<LogPort['append']>[1], data: EventDataOf<T>, causationId: string | null = null): EventEnvelope {
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
  return errorResult({ invocationId, runId: 'unknown', sandboxId, status: 'failed', code: 'internal', message: `the sandbox did not return a result: ${message}` });
}

function argsHashOf(input: unknown): string {
  try {
    return actionHash({ name: 'args', input: input ?? null });
  } catch {
    return 'unhashable';
  }
}

/** Model input is JSON in practice; anything else (NaN, cycles, functions) is described, not stored. */
function jsonSafe(value: unknown): unknown {
  try {
    canonicalJson(value ?? null);
    return value ?? null;
  } catch {
    return { unrepresentable: canonicalOrDescribe(value) };
  }
}

function canonicalOrDescribe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
