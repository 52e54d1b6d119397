import { describe, expect, it } from 'vitest';
import { retryDelay, withRetries } from '../../src/providers/retry';
import { parseRetryAfter } from '../../src/providers/retry-after';
import type { ModelEvent, RetryPolicy } from '../../src/providers/types';
import { collect } from './fake-server';

const POLICY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000 };

describe('retry policy', () => {
  it('backs off exponentially with jitter, within [exp/2, exp], capped', () => {
    for (const [attempt, exp] of [
      [1, 100],
      [2, 200],
      [3, 400],
      [4, 800],
      [5, 1_000],
      [9, 1_000],
    ] as const) {
      expect(retryDelay(POLICY, attempt, undefined, () => 0)).toBe(exp / 2);
      expect(retryDelay(POLICY, attempt, undefined, () => 1)).toBe(exp);
    }
  });

  it('prefers the server hint, capped at maxDelayMs', () => {
    expect(retryDelay(POLICY, 1, 250)).toBe(250);
    expect(retryDelay(POLICY, 1, 30_000)).toBe(1_000);
  });

  it('parses retry-after-ms, retry-after seconds and HTTP dates', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }), now)).toBe(1500);
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(parseRetryAfter(new Headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now)).toBe(3000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined();
  });

  it('retries only transient failures, only before output, and reports the attempt that failed', async () => {
    const fast: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };
    const transient = { kind: 'server' as const, retryable: true, message: 'down.', reason: '500' };
    let calls = 0;
    const flaky = async function* (): AsyncGenerator<ModelEvent> {
      calls++;
      if (calls < 3) throw new Error('boom');
      yield { type: 'text_delta', text: 'ok' };
    };
    expect(
      (await collect(withRetries(fast, undefined, flaky, () => transient))).map((e) =>
        e.type === 'retry' ? e.attempt : e.type,
      ),
    ).toEqual([1, 2, 'text_delta']);

    calls = 0;
    const midway = async function* (): AsyncGenerator<ModelEvent> {
      calls++;
      yield { type: 'text_delta', text: 'partial' };
      throw new Error('cut');
    };
    const events = await collect(withRetries(fast, undefined, midway, () => transient));
    expect(calls).toBe(1);
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'error']);

    calls = 0;
    const fatal = await collect(
      withRetries(fast, undefined, flaky, () => ({
        kind: 'auth',
        retryable: false,
        message: 'bad key.',
        reason: '401',
        status: 401,
      })),
    );
    expect(calls).toBe(1);
    expect(fatal).toEqual([{ type: 'error', kind: 'auth', message: 'bad key.', retryable: false, status: 401 }]);
  });
});
