import type { KV, ObjectInfo, ObjectStore } from 'nats';
import { StoreUnavailableError } from './store-errors';

/**
 * Reads that end. nats.js's object-store `list()` and `get()`, and a bucket's `keys()`, ride
 * ordered push consumers: when their heartbeats stop (the stream's leader was on a node that died
 * or restarted), the client re-creates the consumer with a request it retries forever (`retries:
 * -1`, nats jsclient.js `_resetOrderedConsumer`), and the read waits as long: a `verify` or
 * `resume --store` after a node restart sat there for 10+ minutes. Here each read fails when
 * nothing arrives for `idleMs`, its consumer stopped, and is tried again from the start (a fresh
 * consumer, on whatever leader the stream has now) up to `tries` times; then a
 * StoreUnavailableError says what and what to do.
 */
export interface ReadBounds {
  /** Longest wait for the next entry or chunk. */
  idleMs: number;
  /** Attempts at most, each from the start. */
  tries: number;
  /** No attempt starts later than this after the first (a failover's timeouts are waited out this long). */
  withinMs: number;
}

export const OBJECT_READ_BOUNDS: ReadBounds = { idleMs: 15_000, tries: 8, withinMs: 45_000 };

/** Errors of a read that stalled (nothing arrived in time), told apart from what the store answered. */
const stalls = new WeakSet<Error>();

/** The next value of `it`, or a stall error after `ms` with nothing. */
async function nextWithin<T>(it: AsyncIterator<T>, ms: number): Promise<IteratorResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = new Error(`nothing arrived for ${ms} ms`);
      stalls.add(e);
      reject(e);
    }, ms);
  });
  try {
    return await Promise.race([it.next(), stalled]);
  } finally {
    clearTimeout(timer);
  }
}

async function attempts<T>(what: string, bounds: ReadBounds, once: () => Promise<T>): Promise<T> {
  const until = Date.now() + bounds.withinMs;
  let wait = Math.min(500, bounds.withinMs / 10);
  let last: Error | undefined;
  let tries = 0;
  for (;;) {
    tries++;
    try {
      return await once();
    } catch (e) {
      // A corrupt object (digest mismatch) or a refusal is not a stall: it fails at once.
      if (!(e instanceof Error && stalls.has(e)) && !isTransient(e)) throw e;
      last = e as Error;
    }
    if (tries >= bounds.tries || Date.now() + wait > until) break;
    // A stream electing a leader times out for a few seconds (more on a loaded machine): waited out, growing.
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(2000, Math.ceil(wait * 1.5));
  }
  throw new StoreUnavailableError(
    `the event store did not deliver ${what} (${tries} tries: ${last?.message ?? 'no answer'}); a node of ` +
      'its cluster may be down or restarting and its streams electing a leader. Try again in a minute; if it ' +
      'persists, check that a majority of the cluster is up (nats server report jetstream).',
  );
}

function isTransient(e: unknown): boolean {
  const code = typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : '';
  const message = e instanceof Error ? e.message : String(e);
  return (
    code === '503' || code === 'TIMEOUT' || /no responders|timeout|leader|recreate ordered consumer/i.test(message)
  );
}

/** Every object in the store (deleted ones left out), as `os.list()` gives them, in bounded time. */
export function listObjects(os: ObjectStore, bounds: ReadBounds = OBJECT_READ_BOUNDS): Promise<ObjectInfo[]> {
  return attempts('the list of its files', bounds, async () => {
    const watch = await os.watch({ ignoreDeletes: true, includeHistory: true });
    const it = watch[Symbol.asyncIterator]();
    const out: ObjectInfo[] = [];
    try {
      for (;;) {
        const r = await nextWithin(it, bounds.idleMs);
        // The watch yields null once it has delivered what the store held (os.list stops there too).
        if (r.done || r.value === null) return out;
        out.push(r.value);
      }
    } finally {
      watch.stop();
    }
  });
}

/**
 * Streams an object's chunks (digest checked by nats.js) to `consume`, or gives null when there is
 * none, in bounded time: a stalled stream fails its attempt and the next attempt starts from the
 * beginning, so `consume` must start afresh each time it is called.
 */
export function consumeObject<T>(
  os: ObjectStore,
  name: string,
  consume: (chunks: AsyncIterable<Uint8Array>) => Promise<T>,
  bounds: ReadBounds = OBJECT_READ_BOUNDS,
): Promise<T | null> {
  return attempts(`the file ${name}`, bounds, async () => {
    const got = await os.get(name);
    if (got === null) return null;
    // Settled when the chunks end or fail; a failure reaches the reader too (awaited below).
    got.error.catch(() => undefined);
    const reader = got.data.getReader();
    const it: AsyncIterator<Uint8Array> = { next: () => reader.read() as Promise<IteratorResult<Uint8Array>> };
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for (;;) {
        const r = await nextWithin(it, bounds.idleMs);
        if (r.done) return;
        yield r.value;
      }
    }
    let out: T;
    try {
      out = await consume(chunks());
    } catch (e) {
      await reader.cancel().catch(() => undefined);
      throw e;
    }
    const problem = await got.error;
    if (problem) throw problem;
    return out;
  });
}

/** An object's bytes (digest checked by nats.js), or null when there is none, in bounded time. */
export function readObject(
  os: ObjectStore,
  name: string,
  bounds: ReadBounds = OBJECT_READ_BOUNDS,
): Promise<Uint8Array | null> {
  return consumeObject(
    os,
    name,
    async (chunks) => {
      const all: Uint8Array[] = [];
      for await (const c of chunks) all.push(c);
      return Buffer.concat(all);
    },
    bounds,
  );
}

/** Every key of a bucket (deleted ones left out), as `kv.keys()` gives them, in bounded time. */
export function listKeys(
  kv: KV,
  what = 'the list of its runs',
  bounds: ReadBounds = OBJECT_READ_BOUNDS,
): Promise<string[]> {
  return attempts(what, bounds, async () => {
    const keys = await kv.keys();
    const it = keys[Symbol.asyncIterator]();
    const out: string[] = [];
    try {
      for (;;) {
        const r = await nextWithin(it, bounds.idleMs);
        if (r.done) return out;
        out.push(r.value);
      }
    } finally {
      keys.stop();
    }
  });
}
