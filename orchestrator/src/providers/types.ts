/**
 * The model boundary. A provider turns one API's responses into these events and back; it never
 * executes a tool, touches files or decides anything. Every failure becomes an `error` event:
 * a provider's stream does not throw.
 */

/** A tool call as the model proposed it. Arguments that were not valid JSON are kept raw. */
export interface ModelToolCall {
  id: string;
  name: string;
  /** Parsed arguments; when `parseError` is set this is the raw string the model produced. */
  input: unknown;
  parseError?: string;
  /** Cut off by the output limit before its arguments ended: recorded, never run. */
  truncated?: boolean;
}

export type ModelMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; text: string; toolCalls: ModelToolCall[] }
  | { role: 'tool'; callId: string; toolName: string; content: string; isError: boolean };

export interface ModelToolSpec {
  name: string;
  description: string;
  inputSchema: unknown;
}

export interface ModelRequest {
  system: string;
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  maxOutputTokens?: number;
  signal?: AbortSignal;
}

export interface Usage {
  /** Every input token, cached ones included. */
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from the provider's prompt cache (billed at a lower price). */
  cachedInputTokens?: number;
  /**
   * Input tokens written to the provider's prompt cache (Anthropic bills them above the base
   * price); part of inputTokens. Priced, not recorded: model.output has no field for them.
   */
  cacheWriteInputTokens?: number;
}

export type ProviderErrorKind =
  'auth' | 'rate_limit' | 'server' | 'timeout' | 'bad_request' | 'network' | 'cancelled' | 'script' | 'unknown';

export type ModelStopReason = 'tool_use' | 'end_turn' | 'max_tokens' | 'filtered' | 'other';

export type ModelEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'tool_call'; call: ModelToolCall }
  | { type: 'retry'; attempt: number; delayMs: number; reason: string }
  | {
      type: 'done';
      text: string;
      toolCalls: ModelToolCall[];
      usage: Usage;
      /**
       * Why the model stopped: a tool call, the end of its answer, the output limit, or the provider
       * stopping the reply itself (`filtered`: OpenAI's content_filter, Anthropic's refusal).
       */
      stopReason: ModelStopReason;
      /** Set when the provider did not say why it stopped and the reason was inferred. */
      stopNote?: string;
    }
  | { type: 'error'; kind: ProviderErrorKind; message: string; status?: number; retryable: boolean };

export interface ModelProvider {
  /** e.g. `openai:gpt-4.1`, `anthropic:claude-sonnet-4`, `scripted:demo.json`. */
  readonly id: string;
  stream(request: ModelRequest): AsyncIterable<ModelEvent>;
  /**
   * A resumed run tells the provider how many model turns the log already holds. Stateless APIs
   * need nothing (the context carries the history); a script continues at the next turn.
   */
  resumeAfter?(turnsDone: number): void;
  /**
   * The provider a sub-agent uses. Stateless APIs hand out themselves; a script hands out its next
   * `children` entry (in the order delegate calls are made).
   */
  forChild?(index?: number): ModelProvider;
}

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 8_000 };
