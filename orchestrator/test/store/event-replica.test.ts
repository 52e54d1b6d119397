import { describe, expect, it } from 'vitest';
import { EventReplica, RunFencedError, StoreUnavailableError, type ReplicaTransport } from '../../src/store/index';
import { chosenStore, parseStoreUrl } from '../../src/store/names';
import { StoreUrlError } from '../../src/store/store-errors';

/**
 * The replica's ordering, fencing and lost-ack rules against an in-memory subject that behaves as
 * JetStream does for one subject: expected last sequence, message-id dedup, a shared sequence.
 */
class FakeSubject implements ReplicaTransport {
  msgs: { seq: number; msgId: string; data: string }[] = [];
  seq = 0;
  /** Store the next publish but throw as if its ack was lost. */
  loseNextAck = false;
  /** Fail the next publish without storing it (a connection drop). */
  dropNext = 0;

  publish(_s: string, line: string, o: { msgID: string; expectLast: number }) {
    if (this.dropNext > 0) {
      this.dropNext--;
      return Promise.reject(new Error('TIMEOUT'));
    }
    const dup = this.msgs.find((m) => m.msgId === o.msgID);
    if (dup) return Promise.resolve({ seq: dup.seq, duplicate: true });
    const last = this.msgs.at(-1)?.seq ?? 0;
    if (last !== o.expectLast) return Promise.reject(new Error(`wrong last sequence: ${last}`));
    this.msgs.push({ seq: ++this.seq, msgId: o.msgID, data: line });
    if (this.loseNextAck) {
      this.loseNextAck = false;
      return Promise.reject(new Error('TIMEOUT'));
    }
    return Promise.resolve({ seq: this.seq, duplicate: false });
  }
  lastOnSubject() {
    return Promise.resolve(this.msgs.at(-1));
  }
  messageAt(seq: number) {
    const m = this.msgs.find((x) => x.seq === seq);
    return m ? Promise.resolve(m) : Promise.reject(new Error('no message found'));
  }
}

const fast = { retryDelayMs: 1, maxAttempts: 5 };

describe('EventReplica', () => {
  it('publishes in order, each append expecting the last one stored', async () => {
    const s = new FakeSubject();
    const r = new EventReplica('run_a', 'x', s, { lastStreamSeq: 0, ...fast });
    for (let i = 0; i < 5; i++) r.append(i, `line ${i}`);
    await r.flush();
    expect(s.msgs.map((m) => [m.msgId, m.data])).toEqual([0, 1, 2, 3, 4].map((i) => [`run_a:${i}`, `line ${i}`]));
    expect(r.lastStreamSeq).toBe(5);
  });

  it('settles a lost ack by the subject: stored once, then goes on', async () => {
    const s = new FakeSubject();
    const r = new EventReplica('run_b', 'x', s, { lastStreamSeq: 0, ...fast });
    r.append(0, 'zero');
    s.loseNextAck = true;
    r.append(1, 'one');
    await r.flush();
    expect(s.msgs.map((m) => m.data)).toEqual(['zero', 'one']);
  });

  it('sends again what a dropped connection did not store', async () => {
    const s = new FakeSubject();
    const r = new EventReplica('run_c', 'x', s, { lastStreamSeq: 0, ...fast });
    s.dropNext = 2;
    r.append(0, 'zero');
    r.append(1, 'one');
    await r.flush();
    expect(s.msgs.map((m) => m.data)).toEqual(['zero', 'one']);
  });

  it('is fenced when another writer appended: the flush rejects and nothing more is stored', async () => {
    const s = new FakeSubject();
    const r = new EventReplica('run_d', 'x', s, { lastStreamSeq: 0, ...fast });
    r.append(0, 'zero');
    await r.flush();
    // Another worker continues the run from event 0.
    await s.publish('x', 'theirs', { msgID: 'run_d:1', expectLast: 1 });
    await s.publish('x', 'theirs 2', { msgID: 'run_d:2', expectLast: 2 });
    r.append(1, 'mine');
    await expect(r.flush()).rejects.toBeInstanceOf(RunFencedError);
    r.append(2, 'mine again');
    await expect(r.flush()).rejects.toBeInstanceOf(RunFencedError);
    expect(s.msgs.map((m) => m.data)).toEqual(['zero', 'theirs', 'theirs 2']);
  });

  it('is fenced by a duplicate message id with other content (the other writer numbers events alike)', async () => {
    const s = new FakeSubject();
    const r = new EventReplica('run_e', 'x', s, { lastStreamSeq: 0, ...fast });
    r.append(0, 'zero');
    await r.flush();
    await s.publish('x', 'theirs', { msgID: 'run_e:1', expectLast: 1 });
    r.append(1, 'mine');
    await expect(r.flush()).rejects.toThrow(/taken over by another writer/);
  });

  it('without a known sequence, starts only after its own last event', async () => {
    const s = new FakeSubject();
    await s.publish('x', 'zero', { msgID: 'run_f:0', expectLast: 0 });
    const r = new EventReplica('run_f', 'x', s, fast);
    r.append(1, 'one');
    await r.flush();
    expect(s.msgs.map((m) => m.msgId)).toEqual(['run_f:0', 'run_f:1']);
    // A copy that is behind the store (event 0 where the store has 1) is fenced.
    const stale = new EventReplica('run_f', 'x', s, fast);
    stale.append(1, 'other one');
    await expect(stale.flush()).rejects.toBeInstanceOf(RunFencedError);
  });

  it('gives up with an environment error when the store stays away', async () => {
    const s = new FakeSubject();
    s.lastOnSubject = () => Promise.reject(new Error('no responders'));
    s.dropNext = 100;
    const r = new EventReplica('run_g', 'x', s, { lastStreamSeq: 0, ...fast });
    r.append(0, 'zero');
    await expect(r.flush()).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('refuses an append out of order (a bug in the caller)', () => {
    const r = new EventReplica('run_h', 'x', new FakeSubject(), { lastStreamSeq: 0 });
    r.append(0, 'zero');
    expect(() => r.append(2, 'two')).toThrow(/appended after 0/);
  });
});

describe('--store URLs', () => {
  it('takes nats://HOST:PORT, several for a cluster, and ?replicas=N', () => {
    expect(parseStoreUrl('nats://127.0.0.1:4222')).toEqual({
      url: 'nats://127.0.0.1:4222',
      servers: ['nats://127.0.0.1:4222'],
    });
    expect(parseStoreUrl('nats://a:1,nats://b:2?replicas=3')).toMatchObject({
      servers: ['nats://a:1', 'nats://b:2'],
      replicas: 3,
    });
  });

  it('refuses anything else as a usage error', () => {
    for (const bad of ['http://h:1', 'nats://h', '127.0.0.1:4222', 'nats://h:1?replicas=9', 'nats://h:1/x'])
      expect(() => parseStoreUrl(bad)).toThrow(StoreUrlError);
  });

  it('the flag over GATEHOUSE_STORE, none without either', () => {
    expect(chosenStore(undefined, {})).toBeUndefined();
    expect(chosenStore(undefined, { GATEHOUSE_STORE: 'nats://e:1' })?.url).toBe('nats://e:1');
    expect(chosenStore('nats://f:2', { GATEHOUSE_STORE: 'nats://e:1' })?.url).toBe('nats://f:2');
  });
});
