import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { compileContext } from '../context/compile';
import { contextSha256 } from '../context/context-hash';
import type { Budgets } from '../run/budgets';
import { lastEvent, type StateTracker } from '../events/state';
import { stateSha256 } from '../events/state-hash';
import type { ModelProvider, ModelToolCall, ModelToolSpec, ProviderErrorKind, Usage } from '../providers/types';
import type { CallResult, ToolCall, ToolPipeline } from '../tools/pipeline';
import type { LogPort } from '../tools/ports';
import { costOf } from '../usage/cost';
import type { ModelPrice } from '../usage/model-price';
import { saneUsage } from '../usage/sane-usage';
import { checkFinalAnswer } from './contract';
import { decideByCheck, resumeCheck, type FinalCheck } from './final-check';
import type { LoopController } from './loop-controller';
import type { LoopOutcome } from './loop-outcome';
import { budgetStop, RepeatedFailure, type Progress } from './stop';
import { undecidedReply, type TextReply } from './undecided-reply';
import { emptyAnswerFeedback, filteredFeedback, truncatedFeedback } from './truncated-feedback';

export type { LoopOutcome, RunStatus } from './loop-outcome';

export interface LoopDeps {
  provider: ModelProvider;
  log: LogPort & { events(): readonly EventEnvelope[] };
  tracker: StateTracker;
  pipeline: Pick<ToolPipeline, 'run' | 'continueCall'>;
  system: string;
  task: string;
  tools: ModelToolSpec[];
  budgets: Budgets;
  /** The model's price: each model.output records its cost by it (absent: the cost is unknown). */
  price?: ModelPrice;
  /** What this run's finished sub-agents used: a parent's budgets count its whole tree. */
  childUsage?: () => { tokens: number; costUsd: number };
  contextTokenBudget: number;
  signal: AbortSignal;
  /** Live model text, for a person watching. */
  onText?: (delta: string) => void;
  /** Continue a run from its log: finish the last turn's unfinished calls before asking the model again. */
  resume?: boolean;
  /** The check command that decides whether an accepted answer ends the run final (final-check.ts). */
  check?: Pick<FinalCheck, 'command' | 'timeoutMs'>;
  /** A mode's hooks (plan mode); absent: the plain agent loop. */
  controller?: LoopController;
}

interface TurnOutput {
  text: string;
  toolCalls: ModelToolCall[];
  usage: Usage;
  stopReason: string;
  stopNote?: string;
  retries: number;
  error?: { kind: ProviderErrorKind; message: string };
}

/**
 * The agent loop: compile the context from the log, ask the model, turn its output into a
 * decision (run tool calls through the pipeline, accept a final answer, send an unsupported one
 * back once, or stop), and check the stop policy before every model call and every tool call.
 */
export async function runLoop(d: LoopDeps): Promise<LoopOutcome> {
  // Budgets count the whole run, across pauses and resumes: what was used is folded from the log,
  // and wall time counts only the stretches the run was driven (events/state.ts).
  const st = d.tracker.state;
  const progress: Progress = {
    turns: st.turns,
    toolCalls: st.toolCalls,
    tokens: st.tokens,
    costUsd: st.usage.costUsd,
    startedAt: (st.activeSince ?? Date.now()) - st.activeMs,
  };
  const repeated = new RepeatedFailure(3);
  const usedCallIds = new Set<string>(Object.keys(st.approvals.calls));
  // Sent back once per run, resumed or not.
  let feedbackGiven = d.log
    .events()
    .some((e) => e.type === 'run.feedback' && (e.data.kind ?? 'contract') === 'contract');
  // The last reply was cut off at the output limit: a run that then runs out of budget says so.
  let cutOff = false;
  const check = d.check && { ...d.check, log: d.log, tracker: d.tracker, pipeline: d.pipeline };

  /**
   * A text reply: cut off (sent back), plan mode's to judge, empty or unsupported (sent back once),
   * or an answer the contract accepts (final, or the check decides). Undefined: ask the model again.
   */
  const decideOnText = async ({ turn, text, stopReason }: TextReply): Promise<LoopOutcome | undefined> => {
    if (isCutOff(stopReason)) {
      const note = stopReason === 'filtered' ? filteredFeedback(turn) : truncatedFeedback(turn);
      d.log.append('run.feedback', 'runtime', note);
      return undefined;
    }
    if (d.controller?.onText) return d.controller.onText(turn, text);
    if (text.trim() === '') {
      if (feedbackGiven) return { status: 'partial', stopReason: 'empty_answer', answer: '', decidedBy: 'claims' };
      feedbackGiven = true;
      d.log.append('run.feedback', 'runtime', emptyAnswerFeedback(turn));
      return undefined;
    }
    const verdict = checkFinalAnswer(text, d.log.events());
    if (verdict.ok && check) return decideByCheck(check, turn, text, d.signal);
    if (verdict.ok) return { status: 'final', stopReason: 'final_answer', answer: text, decidedBy: 'answer' };
    if (feedbackGiven) return { status: 'partial', stopReason: 'unsupported_final', answer: text, decidedBy: 'claims' };
    feedbackGiven = true;
    d.log.append('run.feedback', 'runtime', { turn, kind: 'contract', reason: verdict.reason, claims: verdict.claims });
    return undefined;
  };

  if (d.resume) {
    const stopped = await finishLastTurn(d, progress);
    if (stopped) return stopped;
    const checked = check ? await resumeCheck(check, d.signal) : undefined;
    if (checked) return checked;
    // Stopped between the model's text reply and what came of it: decided now (undecided-reply.ts).
    const reply = undecidedReply(d.log.events());
    if (reply) {
      cutOff = isCutOff(reply.stopReason);
      const decided = await decideOnText(reply);
      if (decided) return decided;
    }
  }

  for (;;) {
    if (d.signal.aborted) return { status: 'cancelled', stopReason: 'cancelled' };
    const children = d.childUsage?.() ?? { tokens: 0, costUsd: 0 };
    const stop = budgetStop(
      { ...progress, tokens: progress.tokens + children.tokens, costUsd: progress.costUsd + children.costUsd },
      d.budgets,
    );
    if (stop) return { status: 'partial', stopReason: stop, decidedBy: cutOff ? 'truncated' : 'budget' };
    const before = await d.controller?.beforeTurn?.(progress.turns, d.signal);
    if (before) return before;
    const turn = ++progress.turns;

    const stateHash = stateSha256(d.tracker.state);
    const ctx = compileContext(d.log.events(), {
      system: d.system,
      task: d.task,
      tools: d.controller?.tools?.() ?? d.tools,
      tokenBudget: d.contextTokenBudget,
    });
    d.log.append('model.request', 'runtime', {
      turn,
      model: d.provider.id,
      messages: ctx.request.messages.length,
      estimatedTokens: ctx.estimatedTokens,
      compacted: ctx.compacted,
      contextSha256: contextSha256(ctx.request),
      stateSha256: stateHash,
      // JSON cannot hold an unbounded budget (Infinity): a run given one records none.
      ...(Number.isFinite(d.contextTokenBudget) ? { contextTokenBudget: d.contextTokenBudget } : {}),
    });
    // The wall clock bounds the model call too: a stream that goes quiet and stays open would
    // otherwise hold the run past its budget (the SDKs do not time a streamed body).
    const wall = AbortSignal.timeout(Math.max(1, d.budgets.wallClockMs - (Date.now() - progress.startedAt)));
    const out = await collect(d.provider, { ...ctx.request, signal: AbortSignal.any([d.signal, wall]) }, d.onText);
    const usage = recordedUsage(out.usage, d.price);
    progress.tokens += usage.inputTokens + usage.outputTokens;
    progress.costUsd += usage.costUsd ?? 0;
    const calls = out.toolCalls.map((c) => ({ ...c, id: uniqueId(c.id, turn, usedCallIds) }));
    d.log.append('model.output', 'model', {
      turn,
      text: out.text,
      toolCalls: calls.map((c) => ({
        callId: c.id,
        name: c.name,
        input: c.input,
        ...(c.parseError ? { parseError: c.parseError } : {}),
        ...(c.truncated ? { truncated: true } : {}),
      })),
      stopReason: out.stopReason,
      usage,
      retries: out.retries,
      ...(out.error ? { error: out.error } : {}),
      ...(out.stopNote ? { stopNote: out.stopNote } : {}),
    });

    if (out.error) {
      if (wall.aborted && !d.signal.aborted)
        return { status: 'partial', stopReason: 'wall_clock', decidedBy: 'budget' };
      if (out.error.kind === 'cancelled' || d.signal.aborted) return { status: 'cancelled', stopReason: 'cancelled' };
      if (out.error.kind === 'script') return { status: 'failed', stopReason: out.error.message };
      return { status: 'failed', stopReason: `model_error: ${out.error.kind}: ${out.error.message}` };
    }

    // A reply that did not end (the output limit, the provider's filter) is never an answer, however it reads.
    cutOff = isCutOff(out.stopReason);
    if (calls.length === 0) {
      const decided = await decideOnText({ turn, text: out.text, stopReason: out.stopReason });
      if (decided) return decided;
      continue;
    }

    for (let i = 0; i < calls.length;) {
      if (d.signal.aborted) return { status: 'cancelled', stopReason: 'cancelled' };
      if (progress.toolCalls >= d.budgets.maxToolCalls)
        return { status: 'partial', stopReason: 'max_tool_calls', decidedBy: 'budget' };
      // Consecutive delegate calls run together: sub-agents work in parallel (the delegator caps
      // how many at once). Every other call runs alone, in order.
      let j = i + 1;
      if (calls[i]?.name === 'delegate') while (j < calls.length && calls[j]?.name === 'delegate') j++;
      const batch = calls.slice(i, Math.min(j, i + d.budgets.maxToolCalls - progress.toolCalls));
      i += batch.length;
      progress.toolCalls += batch.length;
      const fields = d.controller?.callFields?.() ?? {};
      const proposed = batch.map((call): ToolCall => ({
        callId: call.id,
        turn,
        tool: call.name,
        input: call.input,
        ...(call.parseError ? { parseError: call.parseError } : {}),
        ...(call.truncated ? { truncated: true } : {}),
        ...fields,
      }));
      const observed = await Promise.all(proposed.map((call) => d.pipeline.run(call, d.signal)));
      if (d.signal.aborted) return { status: 'cancelled', stopReason: 'cancelled' };
      for (const [k, result] of observed.entries()) {
        const call = batch[k]!;
        const after = await d.controller?.afterCall?.(proposed[k]!, result, d.signal);
        if (after) return after;
        // The rest of the turn waits too: a later call may depend on this one.
        if (result.kind === 'pending') return paused(result.requestId);
        if (repeated.record(call.name, call.input, result.observation.outcome !== 'ok'))
          return { status: 'partial', stopReason: 'repeated_failure' };
      }
    }
  }
}

function isCutOff(stopReason: string): boolean {
  return stopReason === 'max_tokens' || stopReason === 'filtered';
}

function paused(requestId: string): LoopOutcome {
  return { status: 'paused', stopReason: 'awaiting_approval', pending: requestId ? [requestId] : [] };
}

/**
 * On resume: the calls of the last model turn that have no observation yet are finished in order —
 * continued from where they stopped if they had started, run through the pipeline if not.
 */
async function finishLastTurn(d: LoopDeps, progress: Progress): Promise<LoopOutcome | undefined> {
  const events = d.log.events();
  const last = lastEvent(events, 'model.output');
  if (!last) return undefined;
  const out = last.data;
  for (const call of out.toolCalls) {
    if (d.signal.aborted) return { status: 'cancelled', stopReason: 'cancelled' };
    const known = d.tracker.state.approvals.calls[call.callId];
    const proposed: ToolCall = {
      callId: call.callId,
      turn: out.turn,
      tool: call.name,
      input: call.input,
      ...(call.parseError ? { parseError: call.parseError } : {}),
      ...(call.truncated ? { truncated: true } : {}),
      ...(d.controller?.callFields?.() ?? {}),
    };
    let result: CallResult | undefined;
    if (known?.observed) result = recordedResult(d, call.callId, call.name);
    else if (known) result = await d.pipeline.continueCall(call.callId, d.signal);
    else {
      if (progress.toolCalls >= d.budgets.maxToolCalls)
        return { status: 'partial', stopReason: 'max_tool_calls', decidedBy: 'budget' };
      progress.toolCalls++;
      result = await d.pipeline.run(proposed, d.signal);
    }
    if (d.signal.aborted) return { status: 'cancelled', stopReason: 'cancelled' };
    // A mode sees finished calls too: what the stopped run did not get to after one is done now.
    const after = result ? await d.controller?.afterCall?.(proposed, result, d.signal) : undefined;
    if (after) return after;
    if (result?.kind === 'pending') return paused(result.requestId);
  }
  return undefined;
}

/** A call observed before the run stopped, as the pipeline would have returned it (content is in the log). */
function recordedResult(d: LoopDeps, callId: string, tool: string): CallResult | undefined {
  const seen = d.tracker.state.observations.find((x) => x.callId === callId);
  if (!seen || seen.outcome === 'pending') return undefined;
  return {
    kind: 'observed',
    observation: { id: seen.id, callId, tool, outcome: seen.outcome, content: '', truncated: false },
  };
}

async function collect(
  provider: ModelProvider,
  request: Parameters<ModelProvider['stream']>[0],
  onText?: (t: string) => void,
): Promise<TurnOutput> {
  let retries = 0;
  let text = '';
  for await (const ev of provider.stream(request)) {
    switch (ev.type) {
      case 'text_delta':
        text += ev.text;
        onText?.(ev.text);
        break;
      case 'retry':
        retries++;
        break;
      case 'done':
        return {
          text: ev.text,
          toolCalls: ev.toolCalls,
          usage: ev.usage,
          stopReason: ev.stopReason,
          ...(ev.stopNote ? { stopNote: ev.stopNote } : {}),
          retries,
        };
      case 'error':
        return {
          text,
          toolCalls: [],
          usage: { inputTokens: 0, outputTokens: 0 },
          stopReason: 'error',
          retries,
          error: { kind: ev.kind, message: ev.message },
        };
      case 'tool_call':
        break;
    }
  }
  return {
    text,
    toolCalls: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    stopReason: 'error',
    retries,
    error: { kind: 'unknown', message: 'the model stream ended without a result' },
  };
}

/** Model call ids become observation call ids; they must be unique within the run. */
function uniqueId(id: string, turn: number, used: Set<string>): string {
  // `check_…` ids are gatehouse's own runs of the check (final-check.ts): a model never gets one.
  let candidate = /^(?!check_)[A-Za-z0-9_-]{1,100}$/.test(id) ? id : `call_${turn}_${used.size}`;
  while (used.has(candidate)) candidate = `${candidate}_${used.size}`;
  used.add(candidate);
  return candidate;
}

/** A turn's usage as model.output records it: cached tokens when reported, the cost when the price is known. */
function recordedUsage(reported: Usage, price: ModelPrice | undefined): EventDataOf<'model.output'>['usage'] {
  const u = saneUsage(reported);
  return {
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    ...(u.cachedInputTokens !== undefined ? { cachedInputTokens: u.cachedInputTokens } : {}),
    ...(price ? { costUsd: costOf(u, price) } : {}),
  };
}
