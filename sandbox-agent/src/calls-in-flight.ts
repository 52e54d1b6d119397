/**
 * The calls this daemon is running, by invocation id, so a signed cancel can stop one.
 *
 * A cancel can come first: the orchestrator cancels the moment its run is interrupted, and the
 * invocation may still be waiting for the last sweep, or sit behind it in the same socket read.
 * Such a cancel is remembered (a bounded number of ids), and the call is aborted as it starts;
 * forgetting it let a `sleep 60` run on after its run was cancelled (found in the delegation suite).
 */
const REMEMBERED_CANCELS = 1024;

export class CallsInFlight {
  readonly #running = new Map<string, AbortController>();
  readonly #cancelledEarly = new Set<string>();

  get size(): number {
    return this.#running.size;
  }

  /** Track a call from now on; its signal is already aborted if the call was cancelled before it began. */
  start(invocationId: string): AbortSignal {
    const ac = new AbortController();
    this.#running.set(invocationId, ac);
    if (this.#cancelledEarly.delete(invocationId)) ac.abort();
    return ac.signal;
  }

  end(invocationId: string): void {
    this.#running.delete(invocationId);
  }

  cancel(invocationId: string): void {
    const running = this.#running.get(invocationId);
    if (running) return running.abort();
    this.#cancelledEarly.add(invocationId);
    if (this.#cancelledEarly.size > REMEMBERED_CANCELS) {
      this.#cancelledEarly.delete(this.#cancelledEarly.values().next().value as string);
    }
  }

  cancelAll(): void {
    for (const ac of this.#running.values()) ac.abort();
  }
}
