import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureImages, LogKey, openEventStore, RunLog, type EventStore } from '@gatehouse/orchestrator';
import { settled, startNatsCluster, type NatsCluster } from '../support/nats-cluster';

/**
 * The event store on a three-node JetStream cluster (three replicas): a node killed while a run
 * writes through loses no event; the run's log in the store equals its file, byte for byte.
 */
let cluster: NatsCluster;
let store: EventStore | undefined;
const dirs: string[] = [];

function tmp(prefix: string): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
}

beforeAll(async () => {
  const images = await ensureImages({ prune: false });
  cluster = await startNatsCluster(images.nats);
}, 180_000);

afterAll(async () => {
  await store?.close().catch(() => undefined);
  await cluster?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the event store on a three-node cluster', () => {
  it('loses no event when a node is killed while a run writes through', async () => {
    const keyDir = tmp('gh-store-key-');
    const key = LogKey.fromBytes(randomBytes(32), {
      keyFile: path.join(keyDir, 'log.key'),
      headsDir: path.join(keyDir, 'heads'),
    });
    const s = await settled(() => openEventStore(cluster.servers.join(','), key));
    store = s;
    const nc = await connect({ servers: cluster.servers });
    const info = await (await nc.jetstreamManager()).streams.info(`GATEHOUSE_EVENTS_${key.id}`);
    await nc.close();
    expect(info.config).toMatchObject({ num_replicas: 3, deny_delete: true, deny_purge: true });
    const stateDir = tmp('gh-store-state-');
    const runId = 'run_cluster';
    const log = RunLog.create(stateDir, runId, { key, replica: s.replicaFor(runId, { lastStreamSeq: 0 }) });
    log.append('run.started', 'user', { task: 'cluster', mode: 'confirm-each', surface: ['bash'] });
    const output = (n: number) =>
      log.append('model.output', 'model', {
        turn: n,
        text: `turn ${n}`,
        toolCalls: [],
        stopReason: 'end_turn',
        usage: { inputTokens: 1, outputTokens: 1 },
        retries: 0,
      });
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
