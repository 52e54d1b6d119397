import type { ModelToolCall } from './types';

/**
 * Streamed tool arguments arrive as JSON text. Bad JSON is the model's mistake, not ours: the call
 * still comes out, with the raw text and the parse error, so the pipeline can reject it as a
 * validation error the model can correct.
 */
export function toolCallFromJson(id: string, name: string, raw: string): ModelToolCall {
  // No argument text at all means "no arguments" (a call to a tool without parameters).
  if (raw.trim() === '') return { id, name, input: {} };
  try {
    return { id, name, input: JSON.parse(raw) as unknown };
  } catch (err) {
    return {
      id,
      name,
      input: raw,
      parseError: `arguments are not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

/**
 * A call the output limit cut off before its arguments ended. It is kept (raw text and all) so the
 * log shows what the model was doing, and marked so it is never run; `parseError` is set too, so
 * anything that only knows about bad JSON still refuses it.
 */
export function truncatedToolCall(id: string, name: string, raw: string): ModelToolCall {
  return {
    id,
    name,
    input: raw,
    parseError: 'the arguments were cut off at the output limit before they ended',
    truncated: true,
  };
}

/** What a provider sends back for an earlier call: the raw text when it never parsed. */
export function argumentsJson(call: ModelToolCall): string {
  return call.parseError !== undefined && typeof call.input === 'string'
    ? call.input
    : JSON.stringify(call.input ?? {});
}
