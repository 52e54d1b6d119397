/**
 * The server's own wait hint on a failed response, in milliseconds: `retry-after-ms` (OpenAI,
 * Anthropic) first, then the standard `retry-after` in seconds or as an HTTP date. Read where a
 * failure is described (failure.ts); the retry loop (retry.ts) caps it.
 */
export function parseRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null) {
    const value = Number.parseFloat(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = headers.get('retry-after');
  if (after === null) return undefined;
  const seconds = Number(after.trim());
  if (after.trim() !== '' && Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
