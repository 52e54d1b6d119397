import { readFileSync } from 'node:fs';
import path from 'node:path';
import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureImages, openEventStore, RunLog, type EventStore } from '@gatehouse/orchestrator';
import { appendOutput, appendStarted, TempDirs } from '../support/event-store-testbed';
import { settled, startNatsCluster, type NatsCluster } from '../support/nats-cluster';

/**
 * The event store on a three-node JetStream cluster (three replicas): a node killed while a run
 * writes through loses no event; the run's log in the store equals its file, byte for byte.
 */
let cluster: NatsCluster;
let store: EventStore | undefined;
const dirs = new TempDirs();
const tmp = (prefix: string): string => dirs.make(prefix);

beforeAll(async () => {
  const images = await ensureImages({ prune: false });
  cluster = await startNatsCluster(images.nats);
}, 180_000);

afterAll(async () => {
  await store?.close().catch(() => undefined);
  await cluster?.stop();
  dirs.remove();
});

describe('the event store on a three-node cluster', () => {
  it('loses no event when a node is killed while a run writes through', async () => {
    const key = dirs.key();
    const s = await settled(() => openEventStore(cluster.servers.join(','), key));
    store = s;
    const nc = await connect({ servers: cluster.servers });
    const info = await (await nc.jetstreamManager()).streams.info(`GATEHOUSE_EVENTS_${key.id}`);
    await nc.close();
    expect(info.config).toMatchObject({ num_replicas: 3, deny_delete: true, deny_purge: true });
    const stateDir = tmp('gh-store-state-');
    const runId = 'run_cluster';
    const log = RunLog.create(stateDir, runId, { key, replica: s.replicaFor(runId, { lastStreamSeq: 0 }) });
    appendStarted(log, 'cluster');
    const output = (n: number) => appendOutput(log, n);
    for (let n = 1; n <= 50; n++) output(n);
    await log.flush();
    await cluster.kill(1);
    for (let n = 51; n <= 100; n++) {
      output(n);
      if (n % 10 === 0) await log.flush();
    }
    await log.flush();
    log.close();
    const local = readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'));
    const stored = await settled(() => s.exportRun(runId));
    expect(stored.toString('utf8').trim().split('\n')).toHaveLength(101);
    expect(stored.equals(local)).toBe(true);
    await cluster.restart(1);
  }, 180_000);
});
