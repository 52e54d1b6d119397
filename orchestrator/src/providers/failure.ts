import type { ProviderErrorKind } from './types';
import { parseRetryAfter } from './retry-after';
import { GatehouseError } from '../errors';

/**
 * What a failed model call amounts to, independent of which SDK threw it. Both official SDKs are
 * generated from the same template (same error class names and fields), so one mapping serves both
 * and the wording a person reads is decided in one place.
 */
export type FailureFacts =
  | { cause: 'cancelled' }
  | { cause: 'timeout'; detail: string }
  | { cause: 'network'; detail: string }
  | { cause: 'http'; status: number; headers?: Headers; detail: string; code?: string }
  /** An error event inside a 200 stream (Anthropic `event: error`, OpenAI `data: {"error":…}`). */
  | { cause: 'stream_error'; errorType?: string; detail: string }
  /** The stream ended without the API's end marker: the connection dropped or a proxy cut it. */
  | { cause: 'incomplete'; detail: string }
  | { cause: 'unknown'; detail: string };

export interface Failure {
  kind: ProviderErrorKind;
  status?: number;
  /** Whether another attempt could succeed (transient), not whether one will be made. */
  retryable: boolean;
  /** For a person: what happened and what to do. */
  message: string;
  /** Short, for `retry` events. */
  reason: string;
  /** The server's own wait hint (retry-after-ms / retry-after), uncapped. */
  retryAfterMs?: number;
}

/** Names a provider in messages, so they can say which variable to check. */
export interface ProviderLabel {
  name: string;
  keyVariable: string;
  baseUrlVariable: string;
  baseUrl: string;
  model: string;
  timeoutMs?: number;
}

/** Raised by an adapter when a stream ends without its end marker; the SDKs end such streams silently. */
export class IncompleteStreamError extends GatehouseError {
  override readonly name = 'IncompleteStreamError';
  readonly kind = 'environment';
}

/** The error classes each SDK exports under the same names. */
export interface SdkErrorClasses {
  APIError: abstract new (...args: never[]) => Error;
  APIUserAbortError: abstract new (...args: never[]) => Error;
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
}

const MAX_DETAIL = 300;

export function sdkFailureFacts(err: unknown, sdk: SdkErrorClasses): FailureFacts {
  if (err instanceof IncompleteStreamError) return { cause: 'incomplete', detail: err.message };
  if (err instanceof sdk.APIUserAbortError) return { cause: 'cancelled' };
  if (err instanceof sdk.APIConnectionTimeoutError) return { cause: 'timeout', detail: err.message };
  if (err instanceof sdk.APIConnectionError) return { cause: 'network', detail: connectionDetail(err) };
  if (err instanceof sdk.APIError) {
    const e = err as Error & {
      status?: unknown;
      headers?: unknown;
      error?: unknown;
      type?: unknown;
      code?: unknown;
      errorCode?: unknown;
    };
    const detail = apiDetail(e.error, e.message);
    const code = typeof e.code === 'string' ? e.code : typeof e.errorCode === 'string' ? e.errorCode : undefined;
    if (typeof e.status === 'number') {
      return {
        cause: 'http',
        status: e.status,
        headers: e.headers instanceof Headers ? e.headers : undefined,
        detail,
        ...(code ? { code } : {}),
      };
    }
    const errorType = typeof e.type === 'string' ? e.type : undefined;
    return { cause: 'stream_error', detail, ...(errorType ? { errorType } : {}) };
  }
  // A connection dropped mid-body surfaces as undici's bare TypeError ("terminated"), not an SDK error.
  if (err instanceof TypeError && /terminated|fetch failed|socket|network/i.test(err.message)) {
    return { cause: 'incomplete', detail: connectionDetail(err) };
  }
  return { cause: 'unknown', detail: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
}

export function describeFailure(facts: FailureFacts, label: ProviderLabel): Failure {
  const { name, baseUrlVariable, baseUrl } = label;
  switch (facts.cause) {
    case 'cancelled':
      return { kind: 'cancelled', retryable: false, message: 'The model request was cancelled.', reason: 'cancelled' };
    case 'timeout': {
      const within = label.timeoutMs !== undefined ? ` within ${label.timeoutMs} ms` : '';
      return {
        kind: 'timeout',
        retryable: true,
        message:
          `No response from ${name} at ${baseUrl}${within}: check the network and ${baseUrlVariable}, or ` +
          `raise the timeout.`,
        reason: 'timeout',
      };
    }
    case 'network':
      return {
        kind: 'network',
        retryable: true,
        message:
          `Could not reach ${name} at ${baseUrl} (${clip(facts.detail)}): check the network and ` +
          `${baseUrlVariable}.`,
        reason: `network: ${clip(facts.detail, 80)}`,
      };
    case 'incomplete':
      return {
        kind: 'network',
        retryable: true,
        message:
          `${name} stopped streaming before the response was complete (${facts.detail}): the connection ` +
          `dropped; try again.`,
        reason: 'stream cut short',
      };
    case 'stream_error':
      return describeStreamError(facts.errorType, facts.detail, name);
    case 'unknown':
      return {
        kind: 'unknown',
        retryable: false,
        message: `Unexpected failure talking to ${name}: ${clip(facts.detail)}`,
        reason: 'unknown',
      };
    case 'http':
      return describeHttp(facts, label);
  }
}

function describeHttp(facts: Extract<FailureFacts, { cause: 'http' }>, label: ProviderLabel): Failure {
  const { name, keyVariable, baseUrlVariable, baseUrl, model } = label;
  const { status } = facts;
  const said = facts.detail ? ` ${name} said: ${clip(facts.detail)}` : '';
  const base = { status };
  if (status === 401) {
    return {
      ...base,
      kind: 'auth',
      retryable: false,
      message: `${keyVariable} was rejected (401): check the key.${said}`,
      reason: '401 unauthorized',
    };
  }
  if (status === 403) {
    return {
      ...base,
      kind: 'auth',
      retryable: false,
      message:
        `${keyVariable} is not allowed to use ${model} (403): check the key's permissions and model ` +
        `access.${said}`,
      reason: '403 forbidden',
    };
  }
  if (status === 429) {
    // Retrying cannot fix an empty account; only a real rate limit is transient.
    if (facts.code === 'insufficient_quota') {
      return {
        ...base,
        kind: 'rate_limit',
        retryable: false,
        message: `${name} quota is exhausted (429): check the account's billing and limits.${said}`,
        reason: '429 quota',
      };
    }
    const retryAfterMs = facts.headers ? parseRetryAfter(facts.headers) : undefined;
    return {
      ...base,
      kind: 'rate_limit',
      retryable: true,
      message:
        `${name} rate limit hit (429): wait before running again, run fewer agents at once, or raise the ` +
        `limit.${said}`,
      reason: '429 rate limited',
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
  if (status === 408) {
    return {
      ...base,
      kind: 'timeout',
      retryable: true,
      message: `${name} timed out the request (408): try again later.${said}`,
      reason: '408 request timeout',
    };
  }
  if (status >= 500) {
    const retryAfterMs = facts.headers ? parseRetryAfter(facts.headers) : undefined;
    return {
      ...base,
      kind: 'server',
      retryable: true,
      message: `${name} server error (${status}): the service is failing or overloaded; try again later.${said}`,
      reason: `${status} server error`,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
  if (status === 404) {
    return {
      ...base,
      kind: 'bad_request',
      retryable: false,
      message:
        `${name} at ${baseUrl} returned 404 for model "${model}": check the model name and ` +
        `${baseUrlVariable}.${said}`,
      reason: '404 not found',
    };
  }
  if (status >= 400) {
    return {
      ...base,
      kind: 'bad_request',
      retryable: false,
      message:
        `${name} rejected the request (${status}); retrying would not help: check the model "${model}" ` +
        `supports this request.${said}`,
      reason: `${status} bad request`,
    };
  }
  return {
    ...base,
    kind: 'unknown',
    retryable: false,
    message: `${name} answered with unexpected status ${status} from ${baseUrl}.${said}`,
    reason: `${status}`,
  };
}

/** Error events inside a 200 stream carry a type, not a status. */
function describeStreamError(errorType: string | undefined, detail: string, name: string): Failure {
  const said = ` ${name} said: ${clip(detail)}`;
  switch (errorType) {
    case 'rate_limit_error':
      return {
        kind: 'rate_limit',
        retryable: true,
        message: `${name} rate limit hit mid-stream: wait before running again.${said}`,
        reason: 'rate limited (stream)',
      };
    case 'authentication_error':
    case 'permission_error':
      return {
        kind: 'auth',
        retryable: false,
        message: `${name} refused the credentials mid-stream: check the key.${said}`,
        reason: errorType,
      };
    case 'invalid_request_error':
    case 'not_found_error':
    case 'request_too_large':
      return {
        kind: 'bad_request',
        retryable: false,
        message: `${name} rejected the request mid-stream; retrying would not help.${said}`,
        reason: errorType,
      };
    default:
      // overloaded_error, api_error, server_error, or an untyped error: the server failed while streaming.
      return {
        kind: 'server',
        retryable: true,
        message: `${name} failed while streaming (${errorType ?? 'error'}): try again later.${said}`,
        reason: `${errorType ?? 'error'} (stream)`,
      };
  }
}

/** The API's own words, whichever body shape the server used (OpenAI, Anthropic, or a compatible server). */
function apiDetail(body: unknown, fallback: string): string {
  if (typeof body === 'string') return body;
  if (isRecord(body)) {
    if (typeof body.message === 'string') return body.message;
    if (isRecord(body.error) && typeof body.error.message === 'string') return body.error.message;
    if (typeof body.error === 'string') return body.error;
    if (typeof body.detail === 'string') return body.detail;
  }
  return fallback;
}

function connectionDetail(err: Error): string {
  const cause: unknown = err.cause;
  if (cause instanceof Error) {
    const code = (cause as Error & { code?: unknown }).code;
    const inner: unknown = cause.cause;
    if (typeof code === 'string') return `${code}: ${cause.message}`;
    if (inner instanceof Error) return connectionDetail(cause);
    return cause.message;
  }
  return err.message;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function clip(text: string, max = MAX_DETAIL): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
