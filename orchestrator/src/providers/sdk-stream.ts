import { describeFailure, sdkFailureFacts, type ProviderLabel, type SdkErrorClasses } from './failure';
import { withRetries } from './retry';
import type { ModelEvent, RetryPolicy } from './types';

/**
 * The outer shape both SDK providers share: one attempt at a time under the retry policy, SDK
 * errors turned into typed failures, and a stream that never throws (a bug of ours becomes an
 * `unknown` error event).
 */
export async function* sdkStream(
  name: string,
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  sdk: SdkErrorClasses,
  label: ProviderLabel,
  attempt: () => AsyncGenerator<ModelEvent, void, undefined>,
): AsyncGenerator<ModelEvent, void, undefined> {
  try {
    yield* withRetries(policy, signal, attempt, (err) => describeFailure(sdkFailureFacts(err, sdk), label));
  } catch (err) {
    yield {
      type: 'error',
      kind: 'unknown',
      message: `${name} provider failed: ${err instanceof Error ? err.message : String(err)}`,
      retryable: false,
    };
  }
}
