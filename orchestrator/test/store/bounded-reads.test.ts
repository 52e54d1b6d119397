import type { KV, ObjectInfo, ObjectResult, ObjectStore, QueuedIterator } from 'nats';
import { describe, expect, it } from 'vitest';
import { consumeObject, listKeys, listObjects, readObject } from '../../src/store/bounded-reads';
import { StoreUnavailableError } from '../../src/store/store-errors';

/**
 * The bounds on object-store reads, against a store whose consumers deliver what they are told to
 * (or nothing, as an ordered consumer re-created forever after a node restart does).
 */
const BOUNDS = { idleMs: 60, tries: 2, withinMs: 5000 };

function watchOf(entries: Array<ObjectInfo | null>, stalls: boolean) {
  let stopped = 0;
  const it = {
    async *[Symbol.asyncIterator]() {
      for (const e of entries) yield e;
      if (stalls) await new Promise(() => undefined);
    },
    stop: () => void stopped++,
  } as unknown as QueuedIterator<ObjectInfo | null>;
  return { it, stopped: () => stopped };
}

function storeWith(parts: { watches?: Array<ReturnType<typeof watchOf>>; gets?: Array<() => ObjectResult | null> }) {
  let w = 0;
  let g = 0;
  return {
    watch: () => Promise.resolve(parts.watches![w++]!.it),
    get: () => Promise.resolve(parts.gets![g++]!()),
  } as unknown as ObjectStore;
}

const info = (name: string) => ({ name }) as ObjectInfo;

function result(chunks: Uint8Array[], o: { stallAfter?: boolean; fail?: Error } = {}) {
  let cancelled = false;
  const data = new ReadableStream<Uint8Array>({
    start(c) {
      for (const x of chunks) c.enqueue(x);
      if (o.fail) c.error(o.fail);
      else if (!o.stallAfter) c.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  const r = { data, error: o.fail ? Promise.reject(o.fail) : Promise.resolve(null) } as unknown as ObjectResult;
  return { r, cancelled: () => cancelled };
}

describe('listing the object store, bounded', () => {
  it('lists until the watch says it has delivered everything', async () => {
    const watch = watchOf([info('a'), info('b'), null], true);
    const got = await listObjects(storeWith({ watches: [watch] }), BOUNDS);
    expect(got.map((o) => o.name)).toEqual(['a', 'b']);
    expect(watch.stopped()).toBe(1);
  });

  it('a watch that goes silent is stopped and tried again, then fails saying what to do', async () => {
    const first = watchOf([info('a')], true);
    const second = watchOf([], true);
    const t0 = Date.now();
    const failed = await listObjects(storeWith({ watches: [first, second] }), BOUNDS).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect((failed as Error).message).toMatch(
      /did not deliver the list of its files \(2 tries: nothing arrived for 60 ms\)/,
    );
    expect((failed as Error).message).toMatch(/majority of the cluster is up/);
    expect(first.stopped() + second.stopped()).toBe(2);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('a stall on the first try and a whole list on the second: the second is the answer', async () => {
    const got = await listObjects(
      storeWith({ watches: [watchOf([info('a')], true), watchOf([info('a'), info('b'), null], true)] }),
      BOUNDS,
    );
    expect(got.map((o) => o.name)).toEqual(['a', 'b']);
  });
});

describe('reading an object, bounded', () => {
  it('reads every chunk', async () => {
    const a = result([Buffer.from('one '), Buffer.from('two')]);
    const got = await readObject(storeWith({ gets: [() => a.r] }), 'x', BOUNDS);
    expect(Buffer.from(got!).toString()).toBe('one two');
  });

  it('none there: null', async () => {
    expect(await readObject(storeWith({ gets: [() => null] }), 'x', BOUNDS)).toBeNull();
  });

  it('chunks that stop coming: the read is cancelled and tried again, then fails', async () => {
    const stalls = [result([Buffer.from('one ')], { stallAfter: true }), result([], { stallAfter: true })];
    const failed = await readObject(storeWith({ gets: stalls.map((s) => () => s.r) }), 'run_x/a.json', BOUNDS).catch(
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect((failed as Error).message).toContain('did not deliver the file run_x/a.json');
    expect(stalls.every((s) => s.cancelled())).toBe(true);
  });

  it('timeouts while a stream elects its leader are waited out, bounded by time; then it reads', async () => {
    let gets = 0;
    const timeout = () => {
      gets++;
      throw Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' });
    };
    const t0 = Date.now();
    const store = storeWith({ gets: Array.from({ length: 100 }, () => timeout) });
    await expect(readObject(store, 'x', { idleMs: 60, tries: 100, withinMs: 300 })).rejects.toThrow(
      /did not deliver the file x \(\d+ tries: TIMEOUT\)/,
    );
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(gets).toBeGreaterThan(1);
    expect(gets).toBeLessThan(10);
    const ok = result([Buffer.from('back')]);
    const recovering = storeWith({ gets: [timeout, timeout, () => ok.r] });
    const got = await readObject(recovering, 'x', { idleMs: 60, tries: 100, withinMs: 5000 });
    expect(Buffer.from(got!).toString()).toBe('back');
  });

  it('a corrupt object is not a stall: it fails at once, not tried again', async () => {
    const bad = result([Buffer.from('x')], { fail: new Error('received a corrupt object, digests do not match') });
    let gets = 0;
    const store = storeWith({ gets: [() => (gets++, bad.r), () => (gets++, bad.r)] });
    await expect(readObject(store, 'x', BOUNDS)).rejects.toThrow(/corrupt object/);
    expect(gets).toBe(1);
  });
});

describe('streaming an object to a consumer, bounded', () => {
  it('a stall mid-stream starts the consumer afresh on a new stream; what it saw of the first is dropped', async () => {
    const first = result([Buffer.from('half ')], { stallAfter: true });
    const second = result([Buffer.from('whole '), Buffer.from('file')]);
    const seen: string[][] = [];
    const got = await consumeObject(
      storeWith({ gets: [() => first.r, () => second.r] }),
      'snap.tar',
      async (chunks) => {
        const mine: string[] = [];
        seen.push(mine);
        for await (const c of chunks) mine.push(Buffer.from(c).toString());
        return mine.join('');
      },
      BOUNDS,
    );
    expect(got).toBe('whole file');
    expect(seen).toEqual([['half '], ['whole ', 'file']]);
    expect(first.cancelled()).toBe(true);
  });

  it("the consumer's own failure is not a stall: it is thrown at once, the stream cancelled", async () => {
    const one = result([Buffer.from('x')], { stallAfter: true });
    let gets = 0;
    const store = storeWith({ gets: [() => (gets++, one.r), () => (gets++, one.r)] });
    const refuse = async (chunks: AsyncIterable<Uint8Array>) => {
      for await (const _ of chunks) throw new Error('does not match its job');
      return 'never';
    };
    await expect(consumeObject(store, 'snap.tar', refuse, BOUNDS)).rejects.toThrow(/does not match its job/);
    expect(gets).toBe(1);
    expect(one.cancelled()).toBe(true);
  });
});

describe("listing a bucket's keys, bounded", () => {
  function keysOf(keys: string[], stalls: boolean) {
    let stopped = 0;
    const it = {
      async *[Symbol.asyncIterator]() {
        for (const k of keys) yield k;
        if (stalls) await new Promise(() => undefined);
      },
      stop: () => void stopped++,
    } as unknown as QueuedIterator<string>;
    return { it, stopped: () => stopped };
  }

  it('lists every key until the end, and a listing that goes silent fails after its tries', async () => {
    const whole = keysOf(['run_a', 'run_b'], false);
    expect(
      await listKeys({ keys: () => Promise.resolve(whole.it) } as unknown as KV, 'the list of its runs', BOUNDS),
    ).toEqual(['run_a', 'run_b']);
    const silent = [keysOf(['run_a'], true), keysOf([], true)];
    let n = 0;
    const kv = { keys: () => Promise.resolve(silent[n++]!.it) } as unknown as KV;
    await expect(listKeys(kv, 'the list of its runs', BOUNDS)).rejects.toThrow(
      /did not deliver the list of its runs \(2 tries/,
    );
    expect(silent.map((s) => s.stopped())).toEqual([1, 1]);
  });
});
