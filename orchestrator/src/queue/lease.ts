import type { KV } from 'nats';
import { z } from 'zod';

/** Who holds a run: written into the lease so `gatehouse status` and a waiting worker can say. */
export const LeaseHolder = z
  .object({ worker: z.string().max(200), host: z.string().max(200), since: z.string().max(64) })
  .strict();
export type LeaseHolder = z.infer<typeof LeaseHolder>;

/** A lease not renewed for the bucket's TTL is gone: then another worker may take the run. */
export const DEFAULT_LEASE_TTL_MS = 15_000;

/**
 * One worker's hold on one run, as a key-value entry in a bucket whose TTL is the lease's: taken with
 * create (refused while anyone holds it), kept with compare-and-set on the revision this holder last
 * wrote (refused once someone else wrote it), let go by deleting that revision only. A holder that
 * cannot renew has lost the run and must stop it at once; the caller is told through `onLost`.
 */
export class Lease {
  #revision: number;
  #timer: NodeJS.Timeout | undefined;
  #lost = false;

  private constructor(
    private readonly kv: KV,
    readonly runId: string,
    readonly holder: LeaseHolder,
    revision: number,
  ) {
    this.#revision = revision;
  }

  /** The lease, or who holds it now (undefined when its holder's entry could not be read). */
  static async acquire(kv: KV, runId: string, holder: LeaseHolder): Promise<Lease | { heldBy?: LeaseHolder }> {
    try {
      const revision = await kv.create(runId, JSON.stringify(holder));
      return new Lease(kv, runId, holder, revision);
    } catch (e) {
      if (!/wrong last sequence|key exists/i.test((e as Error).message)) throw e;
      const entry = await kv.get(runId).catch(() => null);
      const parsed = entry && entry.operation === 'PUT' ? LeaseHolder.safeParse(safeJson(entry.string())) : undefined;
      return parsed?.success ? { heldBy: parsed.data } : {};
    }
  }

  get lost(): boolean {
    return this.#lost;
  }

  /** Renews now: `lost` (for good) when the entry is no longer this holder's, `unsure` when NATS did not answer. */
  async renew(): Promise<'renewed' | 'unsure' | 'lost'> {
    if (this.#lost) return 'lost';
    try {
      this.#revision = await this.kv.update(this.runId, JSON.stringify(this.holder), this.#revision);
      return 'renewed';
    } catch (e) {
      // A refused compare-and-set is final; a timeout may be NATS being away, which the TTL judges:
      // the next renewal either lands in time or finds the entry taken.
      if (!/wrong last sequence/i.test((e as Error).message)) return 'unsure';
      this.#lost = true;
      return 'lost';
    }
  }

  /** Renews every `everyMs` until released; `onLost` runs once if the lease is taken or runs out. */
  hold(everyMs: number, ttlMs: number, onLost: (why: string) => void): void {
    let lastRenewed = Date.now();
    const tick = async (): Promise<void> => {
      // Counted from before the request: the server's TTL started no earlier than that.
      const sent = Date.now();
      const outcome = await this.renew();
      if (outcome === 'renewed') lastRenewed = sent;
      const silent = Date.now() - lastRenewed;
      // Not renewed with a renewal's time to spare: the entry may expire before the next try lands,
      // and then another worker may hold it, whatever NATS says later.
      if (outcome === 'lost' || silent >= ttlMs - everyMs) {
        this.#lost = true;
        this.stop();
        onLost(outcome === 'lost' ? 'another worker holds it' : `not renewed for ${silent} ms (TTL ${ttlMs} ms)`);
        return;
      }
      this.#timer = setTimeout(() => void tick(), everyMs);
    };
    this.#timer = setTimeout(() => void tick(), everyMs);
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Lets the run go: deletes the entry only if it is still the revision this holder wrote. */
  async release(): Promise<void> {
    this.stop();
    if (this.#lost) return;
    this.#lost = true;
    await this.kv.delete(this.runId, { previousSeq: this.#revision }).catch(() => undefined);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
