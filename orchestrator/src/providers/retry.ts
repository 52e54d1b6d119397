import type { Failure } from './failure';
import type { ModelEvent, RetryPolicy } from './types';

/**
 * The one retry policy for every HTTP provider. The SDKs' own retries are disabled
 * (`maxRetries: 0`) so each wait is visible as a `retry` event and bounded by the run's policy.
 *
 * `attempt` yields one attempt's events and throws on failure. A failed attempt is retried only
 * when it is transient, attempts remain, and it had not yet yielded anything: once text reached
 * the consumer, a retry would repeat it.
 *
 * `retry.attempt` is the 1-based number of the attempt that failed and is about to be retried.
 */
export async function* withRetries(
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  attempt: () => AsyncIterable<ModelEvent>,
  classify: (err: unknown) => Failure,
): AsyncGenerator<ModelEvent, void, undefined> {
  const maxAttempts = Math.max(1, Math.floor(policy.maxAttempts));
  for (let n = 1; ; n++) {
    if (signal?.aborted) {
      yield cancelledEvent();
      return;
    }
    let emitted = false;
    try {
      for await (const event of attempt()) {
        emitted = true;
        yield event;
      }
      return;
    } catch (err) {
      // An abort can surface as any error (or as a silently ended stream); the signal is the truth.
      const failure: Failure = signal?.aborted
        ? { kind: 'cancelled', retryable: false, message: 'The model request was cancelled.', reason: 'cancelled' }
        : classify(err);
      if (!failure.retryable || emitted || n >= maxAttempts) {
        yield errorEvent(failure, n, emitted);
        return;
      }
      const delayMs = retryDelay(policy, n, failure.retryAfterMs);
      yield { type: 'retry', attempt: n, delayMs, reason: failure.reason };
      if (!(await sleep(delayMs, signal))) {
        yield cancelledEvent();
        return;
      }
    }
  }
}

/** Exponential backoff with equal jitter (never zero, never above the cap); a server hint wins but is capped too. */
export function retryDelay(
  policy: RetryPolicy,
  failedAttempt: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.round(Math.min(Math.max(0, retryAfterMs), policy.maxDelayMs));
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failedAttempt - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

function errorEvent(failure: Failure, attempts: number, emitted: boolean): ModelEvent {
  let message = failure.message;
  if (emitted && failure.retryable)
    message += ' Output had already started, so it was not retried (a retry would repeat it).';
  else if (failure.retryable && attempts > 1) message += ` Gave up after ${attempts} attempts.`;
  return {
    type: 'error',
    kind: failure.kind,
    message,
    retryable: failure.retryable,
    ...(failure.status !== undefined ? { status: failure.status } : {}),
  };
}

function cancelledEvent(): ModelEvent {
  return { type: 'error', kind: 'cancelled', message: 'The model request was cancelled.', retryable: false };
}

/** Resolves true after `ms`, or false as soon as the signal aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
