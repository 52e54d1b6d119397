import type { InvocationResult } from '@gatehouse/shared';

const MAX_RESULTS = 512;
const MAX_RESULT_BYTES = 64 * 1024 * 1024;

/**
 * At-most-once execution by invocation id. The first delivery runs; a redelivery (in flight or
 * finished) gets the same result, marked `replayed`. Finished results are kept within a count and
 * byte budget; once one is evicted its id is still remembered, so a late redelivery is told the
 * result expired instead of running the action a second time.
 */
export class Journal {
  private readonly results = new Map<string, { promise: Promise<InvocationResult>; bytes: number }>();
  private readonly evicted = new Set<string>();
  private heldBytes = 0;

  get size(): number {
    return this.results.size;
  }

  has(id: string): boolean {
    return this.results.has(id) || this.evicted.has(id);
  }

  /** The recorded result, or 'expired', or undefined when the id was never seen. */
  lookup(id: string): Promise<InvocationResult> | 'expired' | undefined {
    if (this.evicted.has(id)) return 'expired';
    return this.results.get(id)?.promise;
  }

  record(id: string, run: () => Promise<InvocationResult>): Promise<InvocationResult> {
    const entry = { promise: run(), bytes: 0 };
    this.results.set(id, entry);
    void entry.promise.then((result) => {
      entry.bytes = Buffer.byteLength(result.output) + 1024;
      this.heldBytes += entry.bytes;
      this.evict();
    });
    return entry.promise;
  }

  private evict(): void {
    for (const [id, entry] of this.results) {
      if (this.results.size <= MAX_RESULTS && this.heldBytes <= MAX_RESULT_BYTES) return;
      if (entry.bytes === 0) continue; // still running
      this.results.delete(id);
      this.heldBytes -= entry.bytes;
      this.evicted.add(id);
    }
  }
}
