/**
 * Runs a request to JetStream again while the cluster is failing over: a stream whose leader was on
 * a lost node answers 503 (no responders) or times out until a new leader is elected, which takes
 * a few seconds. Anything else fails at once; after `tries` the last failure is thrown.
 */
export async function retryThroughFailover<T>(request: () => Promise<T>, tries = 12, delayMs = 500): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (e) {
      if (attempt >= tries || !isFailover(e)) throw e;
      await new Promise((r) => setTimeout(r, delayMs));
    }
  }
}

function isFailover(e: unknown): boolean {
  const code = typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : '';
  const message = e instanceof Error ? e.message : String(e);
  return code === '503' || code === 'TIMEOUT' || /no responders|timeout|leader/i.test(message);
}
