import path from 'node:path';
import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { createProvider } from '../providers/registry';
import type { ModelProvider } from '../providers/types';
import { priceFor } from '../usage/price-for';
import { askModel, type ModelReply } from './ask-model';
import { rebuildTurns, type RebuiltTurn } from './recorded-context';
import { ReplayError } from './replay-error';
import type { ReplayContext, ReplayModeRunner, ReplayOutcome } from './replay-types';
import { turnMismatch, type ReplyFacts } from './turn-match';

/**
 * `gatehouse replay RUN --mode model --model SPEC`: the recorded context, turn by turn, given to
 * another model. While its calls match the recorded ones (turn-match.ts), the next turn's context is
 * the recorded log's own: the recorded observations are served, nothing executes. The first turn
 * that differs is recorded as `replay.divergence` and ends the replay (verdict `diverged`).
 *
 * The replay is a run of its own: each call to the new model is recorded in its log as
 * `model.request` / `model.output` (with usage and cost), so what the replay spent shows as any run's.
 */
export const modelMode: ReplayModeRunner = {
  prepare(recorded, options) {
    if (!options.modelSpec) {
      throw new ReplayError('usage', 'replay --mode model needs --model SPEC: the model given the recorded context');
    }
    const turns = answeredTurns(recorded);
    if (turns === 0) {
      throw new ReplayError('refused', 'the run has no model turn that was answered: there is no context to replay');
    }
    // Everything a person must fix (spec, key, script) fails here, before the replay's log exists.
    const provider = createProvider(options.modelSpec);
    const model = recordedSpec(options.modelSpec);
    return Promise.resolve({ record: { model }, run: (ctx) => replayTurns(ctx, turns, provider, model) });
  },
};

/** Recorded turns the model answered (an errored call has nothing to compare with). */
function answeredTurns(events: readonly EventEnvelope[]): number {
  return events.filter((e) => e.type === 'model.output' && !e.data.error).length;
}

function* answered(
  events: readonly EventEnvelope[],
): Generator<RebuiltTurn & { output: NonNullable<RebuiltTurn['output']> }> {
  for (const t of rebuildTurns(events)) if (t.output && !t.output.data.error) yield { ...t, output: t.output };
}

async function replayTurns(
  ctx: ReplayContext,
  turns: number,
  provider: ModelProvider,
  model: string,
): Promise<ReplayOutcome> {
  const price = priceFor(model);
  let compared = 0;
  for (const rebuilt of answered(ctx.recorded)) {
    const t = { turn: rebuilt.request.data.turn, request: rebuilt.request.data };
    const turn = compared + 1;
    ctx.log.append('model.request', 'runtime', {
      turn,
      model: provider.id,
      messages: rebuilt.context.request.messages.length,
      estimatedTokens: rebuilt.context.estimatedTokens,
      compacted: rebuilt.context.compacted,
      contextSha256: rebuilt.contextSha256,
      stateSha256: rebuilt.stateSha256,
    });
    const reply = await askModel(provider, { ...rebuilt.context.request, signal: ctx.signal }, price);
    ctx.log.append('model.output', 'model', outputData(turn, reply));
    compared++;
    const output = rebuilt.output.data;
    const then = recordedFacts(output);
    const now = replyFacts(reply);
    const reason = turnMismatch(then, now);
    if (reason) {
      ctx.log.append('replay.divergence', 'runtime', {
        turn: t.turn,
        contextSha256: rebuilt.contextSha256,
        recorded: {
          text: then.text,
          calls: output.toolCalls.map(({ callId, name, input }) => ({ callId, name, input })),
        },
        replayed: {
          text: now.text,
          // The new model's ids are its own (ignored when comparing): cut to what the log holds, never refused.
          calls: reply.toolCalls.map(({ id, name, input }) => ({ callId: id.slice(0, 128), name, input })),
        },
        reason,
      });
      ctx.say(`turn ${t.turn}: diverged: ${reason}`);
      return { compared, differed: 1, skipped: turns - compared, verdict: 'diverged' };
    }
    // Older logs hashed the key order read back (recorded-context.ts): either hash is this context.
    const contextSame = [rebuilt.contextSha256, rebuilt.legacyContextSha256].includes(t.request.contextSha256);
    const stateSame = t.request.stateSha256 === undefined || rebuilt.stateSha256 === t.request.stateSha256;
    ctx.log.append('replay.turn', 'runtime', {
      turn: t.turn,
      context: { recorded: t.request.contextSha256, replayed: rebuilt.contextSha256 },
      state: { recorded: t.request.stateSha256 ?? null, replayed: rebuilt.stateSha256 },
      match: contextSame && stateSame,
      observations: rebuilt.observations,
      calls: output.toolCalls.map(({ callId, name, input }) => ({ callId, name, input })),
    });
    if (!contextSame) {
      ctx.say(
        `turn ${t.turn}: the context rebuilt from the log does not hash as recorded ` +
          '(docs/replay.md says why it can happen); the new model was given the context the log holds',
      );
    }
    ctx.say(`turn ${t.turn}: same calls (${then.calls.map((c) => c.name).join(', ') || 'answer'})`);
  }
  return { compared, differed: 0, skipped: 0, verdict: 'match' };
}

function outputData(turn: number, reply: ModelReply): EventDataOf<'model.output'> {
  return {
    turn,
    text: reply.text,
    toolCalls: reply.toolCalls.map((c) => ({
      callId: c.id,
      name: c.name,
      input: c.input,
      ...(c.parseError ? { parseError: c.parseError } : {}),
      ...(c.truncated ? { truncated: true } : {}),
    })),
    stopReason: reply.stopReason,
    usage: reply.usage,
    retries: reply.retries,
  };
}

function recordedFacts(o: EventDataOf<'model.output'>): ReplyFacts {
  return { text: o.text, calls: o.toolCalls, cutOff: o.stopReason === 'max_tokens' || o.stopReason === 'filtered' };
}

function replyFacts(r: ModelReply): ReplyFacts {
  return { text: r.text, calls: r.toolCalls, cutOff: r.stopReason === 'max_tokens' || r.stopReason === 'filtered' };
}

/** A scripted model's file is recorded by its absolute path, as `gatehouse run` records it. */
function recordedSpec(spec: string): string {
  const m = /^scripted:(.*)$/i.exec(spec.trim());
  return m?.[1] ? `scripted:${path.resolve(m[1].trim())}` : spec.trim();
}
