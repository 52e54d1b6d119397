import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, headers, type JetStreamManager, type NatsConnection } from 'nats';
import { ensureImages } from '@gatehouse/orchestrator';
import { settled, startNatsCluster, type NatsCluster } from '../support/nats-cluster';

/**
 * What issue 16's event store and run queue stand on, shown against a real three-node JetStream
 * cluster (gatehouse's NATS image, Debian's nats-server 2.9): a replicated stream that refuses delete
 * and purge, one subject per run with a single writer (expected last subject sequence), idempotent
 * appends (message ids), and no event lost when one node is killed.
 */
let cluster: NatsCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;
const STREAM = 'GH_EVENTS';

beforeAll(async () => {
  const images = await ensureImages({ prune: false });
  cluster = await startNatsCluster(images.nats);
  nc = await settled(() => connect({ servers: cluster.servers, maxReconnectAttempts: 60, reconnectTimeWait: 250 }));
  jsm = await settled(() => nc.jetstreamManager());
  await settled(() =>
    jsm.streams.add({
      name: STREAM,
      subjects: ['gh.events.>'],
      num_replicas: 3,
      deny_delete: true,
      deny_purge: true,
      duplicate_window: 120_000_000_000,
    }),
  );
}, 180_000);

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  await cluster?.stop();
});

describe('JetStream as an append-only event store (three nodes on loopback)', () => {
  it('one writer per run subject: an append expecting a stale last sequence is refused', async () => {
    const js = nc.jetstream();
    const subject = 'gh.events.run_single';
    const a = await js.publish(subject, '{"seq":1}', { msgID: 'run_single:1', expect: { lastSubjectSequence: 0 } });
    const b = await js.publish(subject, '{"seq":2}', { msgID: 'run_single:2', expect: { lastSubjectSequence: a.seq } });
    expect(b.seq).toBeGreaterThan(a.seq);
    // A second writer that read the subject before b was appended: refused, nothing written.
    await expect(
      js.publish(subject, '{"seq":2,"other":true}', {
        msgID: 'run_single:2b',
        expect: { lastSubjectSequence: a.seq },
      }),
    ).rejects.toThrow(/wrong last sequence/);
    const last = await jsm.streams.getMessage(STREAM, { last_by_subj: subject });
    expect(last.seq).toBe(b.seq);
  });

  it('an append sent twice (a retry after a lost ack) is stored once', async () => {
    const js = nc.jetstream();
    const first = await js.publish('gh.events.run_dedup', 'x', { msgID: 'run_dedup:1' });
    const again = await js.publish('gh.events.run_dedup', 'x', { msgID: 'run_dedup:1' });
    expect(first.duplicate).toBe(false);
    expect(again).toMatchObject({ duplicate: true, seq: first.seq });
  });

  it('refuses to delete a message or purge the stream', async () => {
    const js = nc.jetstream();
    const ack = await js.publish('gh.events.run_keep', 'kept', { msgID: 'run_keep:1' });
    await expect(jsm.streams.deleteMessage(STREAM, ack.seq)).rejects.toThrow();
    await expect(jsm.streams.purge(STREAM)).rejects.toThrow();
    expect((await jsm.streams.getMessage(STREAM, { seq: ack.seq })).string()).toBe('kept');
  });

  it('loses no event when a node is killed while a run appends', async () => {
    const js = nc.jetstream();
    const subject = 'gh.events.run_loss';
    const h = headers();
    h.set('Gatehouse-Test', 'loss');
    let last = 0;
    // An append whose ack was lost may still have been stored: the subject's last message says
    // (its message id), so the writer neither writes it twice nor takes the refusal for a loss.
    const append = async (n: number) => {
      const msgID = `run_loss:${n}`;
      for (let attempt = 0; attempt < 40; attempt++) {
        try {
          const ack = await js.publish(subject, JSON.stringify({ n }), {
            msgID,
            expect: { lastSubjectSequence: last },
            headers: h,
            timeout: 2000,
          });
          last = ack.seq;
          return;
        } catch {
          const stored = await jsm.streams.getMessage(STREAM, { last_by_subj: subject }).catch(() => undefined);
          if (stored?.header.get('Nats-Msg-Id') === msgID) {
            last = stored.seq;
            return;
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      }
      throw new Error(`append ${n} was not stored within 40 attempts`);
    };
    await append(1);
    const first = last;
    for (let n = 2; n <= 50; n++) await append(n);
    await cluster.kill(1);
    for (let n = 51; n <= 100; n++) await append(n);
    // Read back from the stream (not from the acks): every event, once, in order, from the remaining nodes.
    const seen: number[] = [];
    for (let seq = first; seq <= last; seq++) {
      const m = await settled(() => jsm.streams.getMessage(STREAM, { seq }));
      if (m.subject === subject) seen.push(m.json<{ n: number }>().n);
    }
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    await cluster.restart(1);
  }, 120_000);

  it('a run lease is a KV entry: one holder, renewed by compare-and-set, taken over once it expires', async () => {
    const kv = await settled(() => nc.jetstream().views.kv('GH_LEASES', { ttl: 1500, replicas: 3 }));
    const held = await kv.create('run_lease', 'worker-a');
    await expect(kv.create('run_lease', 'worker-b')).rejects.toThrow(/wrong last sequence/);
    const renewed = await kv.update('run_lease', 'worker-a', held);
    // A renewal from a holder that lost the lease (it read an older revision) is refused.
    await expect(kv.update('run_lease', 'worker-a', held)).rejects.toThrow(/wrong last sequence/);
    expect(renewed).toBeGreaterThan(held);
    // Not renewed: the bucket's TTL removes it (bounded wait), and another worker takes it.
    let gone = false;
    for (let i = 0; i < 40 && !gone; i++) {
      await new Promise((r) => setTimeout(r, 250));
      gone = (await kv.get('run_lease')) === null;
    }
    expect(gone).toBe(true);
    const taken = await kv.create('run_lease', 'worker-b');
    expect((await kv.get('run_lease'))?.string()).toBe('worker-b');
    expect(taken).toBeGreaterThan(renewed);
  }, 60_000);
});
