/**
 * Runs a request to JetStream again while the cluster is failing over: a stream whose leader was on
 * a lost node answers 503 (no responders) or times out until a new leader is elected. That takes a
 * few seconds, and over 10 on a loaded machine (seen: a head's put answered 503 for more than the
 * 6 s this used to wait), so the wait is bounded by time as well as tries: at most `tries` requests
 * and none started after `withinMs`, the delay growing from `delayMs` to 2 s. Anything but a
 * failover fails at once; past the bounds the last failure is thrown.
 */
export async function retryThroughFailover<T>(
  request: () => Promise<T>,
  tries = 100,
  delayMs = 500,
  withinMs = 30_000,
): Promise<T> {
  const until = Date.now() + withinMs;
  let wait = delayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (e) {
      if (attempt >= tries || Date.now() + wait > until || !isFailover(e)) throw e;
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(2000, Math.ceil(wait * 1.5));
    }
  }
}

function isFailover(e: unknown): boolean {
  const code = typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : '';
  const message = e instanceof Error ? e.message : String(e);
  return code === '503' || code === 'TIMEOUT' || /no responders|timeout|leader/i.test(message);
}
