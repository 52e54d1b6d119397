import type { EventDataOf } from '@gatehouse/shared';
import { rebuildTurns } from './recorded-context';
import { refuseForeignOptions } from './refuse-foreign-options';
import type { ReplayContext, ReplayModeRunner, ReplayOutcome } from './replay-types';

/**
 * `gatehouse replay RUN --mode trace`: the run rebuilt from its log alone, turn by turn. Before each
 * recorded model call, the state is folded again from the events before it and the context compiled
 * again from them (replay/recorded-context.ts); their hashes must be the ones the loop recorded in
 * that `model.request`. Nothing runs: no model, no sandbox, no policy. One `replay.turn` per turn;
 * the verdict is `mismatch` if any hash differs. A log from before `stateSha256` was recorded has
 * no state hash to compare (`state.recorded` is null): only its context hash is compared.
 */
export const traceMode: ReplayModeRunner = {
  prepare(_recorded, options) {
    refuseForeignOptions('trace', options);
    return Promise.resolve({ record: {}, run: (ctx) => Promise.resolve(trace(ctx)) });
  },
};

function trace(ctx: ReplayContext): ReplayOutcome {
  let compared = 0;
  let differed = 0;
  for (const turn of rebuildTurns(ctx.recorded)) {
    const recorded = turn.request.data;
    const state = { recorded: recorded.stateSha256 ?? null, replayed: turn.stateSha256 };
    // A log written before the hash was canonical matches in the key order it was read back in, or not at all.
    const replayed =
      recorded.contextSha256 === turn.legacyContextSha256 ? turn.legacyContextSha256 : turn.contextSha256;
    const context = { recorded: recorded.contextSha256, replayed };
    const match =
      context.recorded === context.replayed && (state.recorded === null || state.recorded === state.replayed);
    const calls: EventDataOf<'replay.turn'>['calls'] = (turn.output?.data.toolCalls ?? []).map((c) => ({
      callId: c.callId,
      name: c.name,
      input: c.input,
    }));
    ctx.log.append('replay.turn', 'runtime', {
      turn: recorded.turn,
      context,
      state,
      match,
      observations: turn.observations,
      calls,
    });
    compared++;
    if (!match) differed++;
    ctx.say(turnLine(recorded.turn, state, context, turn.observations.length, calls));
  }
  return { compared, differed, skipped: 0, verdict: differed > 0 ? 'mismatch' : 'match' };
}

function turnLine(
  turn: number,
  state: { recorded: string | null; replayed: string },
  context: { recorded: string; replayed: string },
  observations: number,
  calls: ReadonlyArray<{ name: string }>,
): string {
  const seen = `${observations} observation${observations === 1 ? '' : 's'} seen, ${
    calls.length === 0 ? 'no call' : calls.map((c) => c.name).join(', ')
  }`;
  const wrong: string[] = [];
  if (context.recorded !== context.replayed)
    wrong.push(`context ${short(context.recorded)} recorded, ${short(context.replayed)} rebuilt`);
  if (state.recorded !== null && state.recorded !== state.replayed)
    wrong.push(`state ${short(state.recorded)} recorded, ${short(state.replayed)} rebuilt`);
  const unrecorded = state.recorded === null ? ' (no state hash recorded)' : '';
  return wrong.length === 0
    ? `  turn ${turn}: match${unrecorded} (${seen})`
    : `  turn ${turn}: MISMATCH: ${wrong.join('; ')} (${seen})`;
}

const short = (hash: string) => hash.slice(0, 12);
