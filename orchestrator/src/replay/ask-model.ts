import { oneLine } from '../approval/channels/screen';
import type { EventDataOf } from '@gatehouse/shared';
import { GatehouseError } from '../errors';
import type { ModelProvider, ModelRequest, ModelToolCall } from '../providers/types';
import { costOf } from '../usage/cost';
import type { ModelPrice } from '../usage/model-price';
import { saneUsage } from '../usage/sane-usage';

/** The model a replay asked did not answer (its provider failed, or the replay was cancelled). */
export class ReplayModelError extends GatehouseError {
  override readonly name = 'ReplayModelError';
  readonly kind = 'environment';
}

export interface ModelReply {
  text: string;
  toolCalls: ModelToolCall[];
  stopReason: string;
  usage: EventDataOf<'model.output'>['usage'];
  retries: number;
}

/**
 * One model call of a replay: the whole streamed reply, with its usage priced as the loop prices it.
 * A provider error ends the replay (nothing can be compared without a reply): it is thrown.
 */
export async function askModel(
  provider: ModelProvider,
  request: ModelRequest,
  price?: ModelPrice,
): Promise<ModelReply> {
  let retries = 0;
  for await (const ev of provider.stream(request)) {
    if (ev.type === 'retry') retries++;
    else if (ev.type === 'error') {
      throw new ReplayModelError(
        // The server's words reach a terminal (cli/main.ts prints errors as they are): control bytes shown, not sent.
        `the model ${provider.id} failed (${ev.kind}): ${oneLine(ev.message)}; fix the model or its server and ` +
          'replay again',
      );
    } else if (ev.type === 'done') {
      const u = saneUsage(ev.usage);
      return {
        text: ev.text,
        toolCalls: ev.toolCalls,
        stopReason: ev.stopReason,
        retries,
        usage: {
          inputTokens: u.inputTokens,
          outputTokens: u.outputTokens,
          ...(u.cachedInputTokens !== undefined ? { cachedInputTokens: u.cachedInputTokens } : {}),
          ...(price ? { costUsd: costOf(u, price) } : {}),
        },
      };
    }
  }
  throw new ReplayModelError(`the model ${provider.id} ended its stream without a result; replay again`);
}
