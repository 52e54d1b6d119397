import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from 'nats';
import {
  EventLogCorruptError,
  openEventStore,
  RunFencedError,
  RunLog,
  StoreUnavailableError,
  StoreUrlError,
  verifyLog,
  type EventStore,
  type LogKey,
} from '@gatehouse/orchestrator';
import { appendOutput, appendStarted, StoreTestbed } from '../support/event-store-testbed';

/**
 * The JetStream event store against a real single JetStream server (gatehouse's NATS image): runs
 * written through, a retried append stored once, a second writer fenced, a forged message refused,
 * a run pulled into an empty state directory and opened there.
 */
let bed: StoreTestbed;
let url: string;
let nc: NatsConnection;
const tmp = (prefix: string): string => bed.dirs.make(prefix);
const testKey = (): LogKey => bed.dirs.key();
const open = (key: LogKey): Promise<EventStore> => bed.open(key);
const started = (log: RunLog): void => appendStarted(log, 'store test');
const output = appendOutput;

beforeAll(async () => {
  bed = await StoreTestbed.start();
  url = bed.url;
  nc = bed.nc;
}, 120_000);

afterAll(async () => {
  await bed?.stop();
});

describe('the JetStream event store', () => {
  it('refuses a --store that is not nats:// (usage) and names an unreachable server', async () => {
    await expect(openEventStore('http://127.0.0.1:4222', testKey())).rejects.toBeInstanceOf(StoreUrlError);
    // A port nothing listens on: a listener of our own, closed, so no other address is tried.
    const net = await import('node:net');
    const l = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => l.once('listening', r));
    const port = (l.address() as { port: number }).port;
    await new Promise((r) => l.close(r));
    const err = await openEventStore(`nats://127.0.0.1:${port}`, testKey()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toContain(`nats://127.0.0.1:${port}`);
  });

  it('writes every event through, byte for byte, and the stream refuses delete and purge', async () => {
    const key = testKey();
    const store = await open(key);
    const stateDir = tmp('gh-store-state-');
    const runId = 'run_through';
    const log = RunLog.create(stateDir, runId, { key, replica: store.replicaFor(runId, { lastStreamSeq: 0 }) });
    started(log);
    for (let i = 1; i <= 20; i++) output(log, i);
    log.artifacts.put('an artifact of the run');
    await log.flush();
    log.close();
    const local = readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'));
    expect((await store.exportRun(runId)).equals(local)).toBe(true);
    expect(await store.listRuns()).toContain(runId);
    const jsm = await nc.jetstreamManager();
    const stream = `GATEHOUSE_EVENTS_${key.id}`;
    const info = await jsm.streams.info(stream);
    expect(info.config).toMatchObject({ deny_delete: true, deny_purge: true, storage: 'file' });
    await expect(jsm.streams.purge(stream)).rejects.toThrow();
    await expect(jsm.streams.deleteMessage(stream, 1)).rejects.toThrow();

    // Pulled into an empty state directory: the log, its files and its head; it verifies there.
    const fresh = tmp('gh-store-fresh-');
    const got = await store.materializeRun(fresh, runId);
    expect(got.events).toBe(21);
    expect(got.files).toBeGreaterThan(0);
    expect(readFileSync(path.join(fresh, 'runs', runId, 'events.jsonl')).equals(local)).toBe(true);
    const v = verifyLog(path.join(fresh, 'runs', runId, 'events.jsonl'), { key });
    expect(v.ok).toBe(true);
    // Pulled over the writer's own copy (the same bytes): nothing changes.
    expect((await store.materializeRun(stateDir, runId)).events).toBe(21);
    expect(readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl')).equals(local)).toBe(true);
  });

  it('stores an event sent twice with the same message id once', async () => {
    const key = testKey();
    await open(key);
    const js = nc.jetstream();
    const subject = `gatehouse.events.${key.id}.run_dedup`;
    const a = await js.publish(subject, 'x', { msgID: 'run_dedup:0', expect: { lastSubjectSequence: 0 } });
    const b = await js.publish(subject, 'x', { msgID: 'run_dedup:0', expect: { lastSubjectSequence: 0 } });
    expect(a.duplicate).toBe(false);
    expect(b).toMatchObject({ duplicate: true, seq: a.seq });
    const jsm = await nc.jetstreamManager();
    const last = await jsm.streams.getMessage(`GATEHOUSE_EVENTS_${key.id}`, { last_by_subj: subject });
    expect(last.seq).toBe(a.seq);
  });

  it('fences the stale writer when another takes the run over: its flush rejects, it stores nothing more', async () => {
    const key = testKey();
    const store = await open(key);
    const runId = 'run_fenced';
    const first = tmp('gh-store-w1-');
    const a = store.replicaFor(runId, { lastStreamSeq: 0 });
    const stale = RunLog.create(first, runId, { key, replica: a });
    started(stale);
    output(stale, 1);
    await stale.flush();
    // A second worker takes the run over: it pulls the run and continues from the stream.
    const second = tmp('gh-store-w2-');
    const pulled = await store.materializeRun(second, runId);
    const { log: taker } = RunLog.open(second, runId, {
      key,
      replica: store.replicaFor(runId, { lastStreamSeq: pulled.lastStreamSeq }),
    });
    output(taker, 2);
    await taker.flush();
    // The first worker, unaware, appends and flushes before acting: refused, fenced for good.
    output(stale, 2);
    await expect(stale.flush()).rejects.toBeInstanceOf(RunFencedError);
    output(stale, 3);
    await expect(stale.flush()).rejects.toThrow(/taken over by another writer/);
    stale.close();
    taker.close();
    await store.close().catch(() => undefined);
    // The store holds the taker's run only: 3 events, the last one the taker's.
    const other = await open(key);
    const jsonl = (await other.exportRun(runId)).toString('utf8').trim().split('\n');
    expect(jsonl).toHaveLength(3);
    expect(jsonl[2]).toBe(
      readFileSync(path.join(second, 'runs', runId, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')[2],
    );
  });

  it('refuses a run with a forged event on its subject (an append the stream allows)', async () => {
    const key = testKey();
    const store = await open(key);
    const stateDir = tmp('gh-store-forge-');
    const runId = 'run_forged';
    const log = RunLog.create(stateDir, runId, { key, replica: store.replicaFor(runId, { lastStreamSeq: 0 }) });
    started(log);
    output(log, 1);
    await log.flush();
    log.close();
    // Forged: the next event, chained correctly, but its MAC made with another key.
    const otherDir = tmp('gh-store-other-');
    const otherKey = testKey();
    const forgeLog = RunLog.create(otherDir, runId, { key: otherKey });
    started(forgeLog);
    output(forgeLog, 1);
    output(forgeLog, 2);
    forgeLog.close();
    const forged = readFileSync(path.join(otherDir, 'runs', runId, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')[2]!;
    const wrongMac = forged.replace(/"mac":"[0-9a-f]{16}:[0-9a-f]{64}"/, `"mac":"${key.id}:${'0'.repeat(64)}"`);
    await nc.jetstream().publish(`gatehouse.events.${key.id}.${runId}`, wrongMac, { msgID: `${runId}:2` });
    const fresh = tmp('gh-store-fresh-');
    const err = await store.materializeRun(fresh, runId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EventLogCorruptError);
    expect((err as Error).message).toMatch(/seq 2|line 3/);
    expect(existsSync(path.join(fresh, 'runs', runId, 'events.jsonl'))).toBe(false);
    await expect(store.exportRun(runId)).rejects.toBeInstanceOf(EventLogCorruptError);
  });

  it('refuses a stream someone else made that allows delete and purge', async () => {
    const key = testKey();
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: `GATEHOUSE_EVENTS_${key.id}`, subjects: [`gatehouse.events.${key.id}.>`] });
    const err = await openEventStore(url, key).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toMatch(/not made by gatehouse/);
  });

  it('refuses to pull over a local copy that went its own way', async () => {
    const key = testKey();
    const store = await open(key);
    const runId = 'run_diverged';
    const stateDir = tmp('gh-store-div-');
    const log = RunLog.create(stateDir, runId, { key, replica: store.replicaFor(runId, { lastStreamSeq: 0 }) });
    started(log);
    await log.flush();
    log.close();
    const other = tmp('gh-store-div2-');
    mkdirSync(path.join(other, 'runs', runId), { recursive: true });
    writeFileSync(path.join(other, 'runs', runId, 'events.jsonl'), '{"something":"else"}\n');
    await expect(store.materializeRun(other, runId)).rejects.toThrow(/differs from the store/);
  });
});
