import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from 'nats';
import { EventLogCorruptError, RunLog, type EventStore, type LogKey } from '@gatehouse/orchestrator';
import { appendOutput, appendStarted, StoreTestbed } from '../support/event-store-testbed';

/**
 * Red team (issue 16): a writer with NATS access to the event store but without the log key, on a
 * real JetStream server. It may publish anything on a run's subject, rewrite the run's head in the
 * KV bucket, and replace files in the object store; a run pulled from the store must be refused,
 * or the change detected, each time.
 */
let bed: StoreTestbed;
let nc: NatsConnection;
const tmp = (prefix: string): string => bed.dirs.make(prefix);
const testKey = (): LogKey => bed.dirs.key('gh-rt16-key-');
const output = appendOutput;

/** A run of `n` outputs written through to the store; its lines as the writer wrote them. */
async function storedRun(key: LogKey, store: EventStore, runId: string, n: number): Promise<string[]> {
  const stateDir = tmp('gh-rt16-state-');
  const log = RunLog.create(stateDir, runId, { key, replica: store.replicaFor(runId, { lastStreamSeq: 0 }) });
  appendStarted(log, 'red team');
  for (let i = 1; i <= n; i++) output(log, i);
  await log.flush();
  log.close();
  return readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n');
}

async function setup(): Promise<{ key: LogKey; store: EventStore }> {
  const key = testKey();
  return { key, store: await bed.open(key) };
}

async function refused(store: EventStore, runId: string, reason: RegExp): Promise<void> {
  const fresh = tmp('gh-rt16-fresh-');
  const err = await store.materializeRun(fresh, runId).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(EventLogCorruptError);
  expect((err as Error).message).toMatch(reason);
  expect(existsSync(path.join(fresh, 'runs', runId, 'events.jsonl'))).toBe(false);
}

beforeAll(async () => {
  bed = await StoreTestbed.start();
  nc = bed.nc;
}, 120_000);

afterAll(async () => {
  await bed?.stop();
});

describe('redteam16: the event store against a writer without the log key', () => {
  it('refuses a genuine earlier event replayed as the next one (duplicate / reorder)', async () => {
    const { key, store } = await setup();
    const runId = 'run_rt16replay';
    const lines = await storedRun(key, store, runId, 3);
    await nc.jetstream().publish(`gatehouse.events.${key.id}.${runId}`, lines[1], { msgID: `${runId}:4` });
    await refused(store, runId, /line 5|seq 4/);
  });

  it("refuses another run's genuine event (its MAC valid) spliced in as the next one", async () => {
    const { key, store } = await setup();
    const runId = 'run_rt16splice';
    await storedRun(key, store, runId, 2);
    const other = await storedRun(key, store, 'run_rt16donor', 3);
    await nc.jetstream().publish(`gatehouse.events.${key.id}.${runId}`, other[3], { msgID: `${runId}:3` });
    await refused(store, runId, /line 4|seq 3/);
  });

  it('refuses a message without the expected message id (a gap or another writer)', async () => {
    const { key, store } = await setup();
    const runId = 'run_rt16noid';
    const lines = await storedRun(key, store, runId, 1);
    await nc.jetstream().publish(`gatehouse.events.${key.id}.${runId}`, lines[1]);
    await refused(store, runId, /has id \(none\)/);
  });

  it("refuses a head rewritten: garbage, a forged MAC, or another run's genuine head", async () => {
    const { key, store } = await setup();
    const runId = 'run_rt16head';
    await storedRun(key, store, runId, 2);
    await storedRun(key, store, 'run_rt16headdonor', 5);
    const heads = await nc.jetstream().views.kv(`GATEHOUSE_HEADS_${key.id}`);
    const donor = (await heads.get('run_rt16headdonor'))!.string();
    await heads.put(runId, 'not json');
    await refused(store, runId, /not JSON/);
    const forged = JSON.parse(donor) as Record<string, unknown>;
    await heads.put(runId, JSON.stringify({ ...forged, runId, events: 1, mac: '0'.repeat(64) }));
    await refused(store, runId, /does not verify/);
    await heads.put(runId, donor);
    await refused(store, runId, /records 6 events but the stream holds 3/);
  });

  it('refuses a file in the object store whose name leaves the run folder', async () => {
    const { key, store } = await setup();
    const runId = 'run_rt16files';
    await storedRun(key, store, runId, 1);
    const files = await nc.jetstream().views.os(`GATEHOUSE_FILES_${key.id}`);
    await files.putBlob({ name: `${runId}/../run_rt16victim/events.jsonl` }, new TextEncoder().encode('{}\n'));
    const fresh = tmp('gh-rt16-fresh-');
    await expect(store.materializeRun(fresh, runId)).rejects.toThrow(/not inside run run_rt16files's folder/);
    expect(existsSync(path.join(fresh, 'runs', 'run_rt16victim'))).toBe(false);
  });

  // deny_delete/deny_purge stop deleting messages, but anyone with the JetStream API may delete the
  // whole stream, make it again as gatehouse would and publish a genuine PREFIX of the run (the
  // events' MACs are valid), with the head deleted or an older genuine head put back. Before the
  // fix a fresh worker pulled the shortened run (and would resume it from an earlier point).
  it('refuses a stream made again with a prefix of the run (head deleted, or an old one)', async () => {
    const { key, store } = await setup();
    const runId = 'run_rt16truncate';
    const stateDir = tmp('gh-rt16-state-');
    const log = RunLog.create(stateDir, runId, { key, replica: store.replicaFor(runId, { lastStreamSeq: 0 }) });
    appendStarted(log, 'red team');
    for (let i = 1; i <= 2; i++) output(log, i);
    await log.flush();
    const heads = await nc.jetstream().views.kv(`GATEHOUSE_HEADS_${key.id}`);
    const oldHead = (await heads.get(runId))!.string();
    for (let i = 3; i <= 6; i++) output(log, i);
    await log.flush();
    log.close();
    const lines = readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines).toHaveLength(7);

    const jsm = await nc.jetstreamManager();
    const stream = `GATEHOUSE_EVENTS_${key.id}`;
    const config = (await jsm.streams.info(stream)).config;
    await jsm.streams.delete(stream);
    await jsm.streams.add(config);
    for (let i = 0; i < 3; i++)
      await nc.jetstream().publish(`gatehouse.events.${key.id}.${runId}`, lines[i], { msgID: `${runId}:${i}` });
    await heads.delete(runId);
    await refused(store, runId, /no head/);
    await heads.put(runId, oldHead);
    await refused(store, runId, /deleted and made again/);
  });
});
