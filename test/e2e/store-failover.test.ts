import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, StorageType } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureImages, LogKey, openEventStore, RunLog } from '@gatehouse/orchestrator';
import { appendOutput, appendStarted } from '../support/event-store-testbed';
import { settled, startNatsCluster, type NatsCluster } from '../support/nats-cluster';
import { CLI } from '../support/queue-cli';
import { stallingProxy } from '../support/stalling-proxy';
import { readObject } from '../../orchestrator/src/store/bounded-reads';
import { StoreUnavailableError } from '../../orchestrator/src/store/store-errors';

/**
 * Reading the event store while a node of the cluster is down or just back: every command ends in
 * bounded time, with the run or with an error that says what happened.
 */
let cluster: NatsCluster;
const dirs: string[] = [];
let env: NodeJS.ProcessEnv;
const runId = 'run_failover';
/** Longest a read may take here: bounded, not quick (a loaded 2-core machine, failovers of a few seconds). */
const LIMIT = 150_000;

function tmp(prefix: string): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** The CLI, timed; killed (and said so) past `limitMs`. */
function timedCli(args: string[], limitMs: number) {
  return new Promise<{ code: number | null; ms: number; stdout: string; stderr: string; killed: boolean }>(
    (resolve) => {
      const t0 = Date.now();
      const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, limitMs);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, ms: Date.now() - t0, stdout, stderr, killed });
      });
    },
  );
}

beforeAll(async () => {
  const images = await ensureImages({ prune: false });
  cluster = await startNatsCluster(images.nats);
  env = { GATEHOUSE_KEY_FILE: path.join(tmp('gh-failover-key-'), 'log.key'), CI: 'true' };
  const key = LogKey.load({ env });
  const store = await settled(() => openEventStore(cluster.servers.join(','), key));
  const log = RunLog.create(tmp('gh-failover-state-'), runId, {
    key,
    replica: store.replicaFor(runId, { lastStreamSeq: 0 }),
  });
  appendStarted(log, 'failover');
  // A file too, so reading the run reads the object store.
  const artifact = log.artifacts.put('an artifact\n'.repeat(100));
  log.append('tool.execution.completed', 'sandbox', {
    callId: 'c1',
    invocationId: 'inv-1',
    status: 'ok',
    exitCode: 0,
    signal: null,
    durationMs: 1,
    bytes: artifact.bytes,
    truncated: false,
    filesChanged: [],
    artifactRefs: [artifact.ref],
    artifacts: [{ ref: artifact.ref, sha256: artifact.sha256, bytes: artifact.bytes }],
  });
  for (let n = 1; n <= 5; n++) appendOutput(log, n);
  await log.flush();
  log.close();
  await store.close();
}, 240_000);

afterAll(async () => {
  await cluster?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('reading the store while nodes are down or just back', () => {
  const url = () => cluster.servers.join(',');
  const read = async (what: string) => {
    const verified = await timedCli(['verify', runId, '--store', url(), '--state-dir', tmp('gh-failover-v-')], LIMIT);
    const exported = await timedCli(['export', runId, '--store', url()], LIMIT);
    // What each took, for the record of a slow machine.
    console.log(
      `${what}: verify exit ${verified.code} in ${verified.ms} ms, export exit ${exported.code} in ${exported.ms} ms`,
    );
    return { verified, exported };
  };

  it('the URL’s first server down: verify and export answer through the others', async () => {
    await cluster.kill(0);
    try {
      for (const attempt of ['at once', 'again']) {
        const { verified, exported } = await read(`first server down, ${attempt}`);
        expect(verified.killed, verified.stderr).toBe(false);
        expect(verified.code, verified.stderr).toBe(0);
        expect(verified.stdout).toContain('chain: intact, 7 events verified');
        expect(exported.code, exported.stderr).toBe(0);
        expect(exported.stdout.trim().split('\n')).toHaveLength(7);
      }
    } finally {
      await cluster.restart(0);
    }
  }, 600_000);

  it('a node restarted after 10 s down: the next reads answer', async () => {
    await cluster.kill(1);
    try {
      await new Promise((r) => setTimeout(r, 10_000));
    } finally {
      await cluster.restart(1);
    }
    const { verified, exported } = await read('second server just restarted');
    expect(verified.killed, verified.stderr).toBe(false);
    expect(verified.code, verified.stderr).toBe(0);
    expect(exported.code, exported.stderr).toBe(0);
  }, 600_000);

  it('a majority down: every read ends in bounded time and says what happened; back up, it reads again', async () => {
    await cluster.kill(1);
    await cluster.kill(2);
    try {
      const { verified, exported } = await read('two of three down');
      for (const r of [verified, exported]) {
        expect(r.killed, 'still waiting when killed').toBe(false);
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/did not (answer in time|deliver)/);
        expect(r.stderr).toMatch(/majority/);
        expect(r.stderr).not.toMatch(/needs JetStream enabled/);
      }
    } finally {
      await cluster.restart(1);
      await cluster.restart(2);
    }
    const back = await settled(async () => {
      const r = await timedCli(['export', runId, '--store', url()], LIMIT);
      if (r.code !== 0) throw new Error(r.stderr);
      return r;
    });
    expect(back.stdout.trim().split('\n')).toHaveLength(7);
  }, 900_000);
});

describe('a file read from a node that goes silent', () => {
  it('ends in a StoreUnavailableError while the node is silent (nats.js alone waits), then reads', async () => {
    // Through the one node only, so nothing can answer for it: the read must give up, not wait. The node is
    // reached through a proxy that goes silent 1 MiB into the file, so the read is surely mid-file.
    const node = new URL(cluster.servers[2]!.replace(/^nats:/, 'http:'));
    const proxy = await stallingProxy({ host: node.hostname, port: Number(node.port) });
    const nc = await connect({
      servers: [proxy.url],
      timeout: 5000,
      pingInterval: 5000,
      maxPingOut: 3,
      ignoreClusterUpdates: true,
      maxReconnectAttempts: -1,
    });
    try {
      const os = await settled(() => nc.jetstream().views.os('failover_probe', { storage: StorageType.File }));
      const bytes = randomBytes(40 * 1024 * 1024);
      await settled(() => os.putBlob({ name: 'big' }, bytes));
      proxy.stallAfter(1024 * 1024);
      const t0 = Date.now();
      const reading = readObject(os, 'big').then(
        () => 'read',
        (e: unknown) => e,
      );
      let outcome: unknown;
      try {
        // Measured here: nats.js's getBlob of this file waited out a 90 s pause (92 s); the bound is ~3 × 15 s.
        outcome = await Promise.race([reading, new Promise((r) => setTimeout(() => r('still waiting'), 80_000))]);
      } finally {
        expect(proxy.stalled()).toBe(true);
        proxy.release();
      }
      console.log(`the read through a silent node ended in ${Date.now() - t0} ms`);
      expect(outcome).toBeInstanceOf(StoreUnavailableError);
      expect((outcome as Error).message).toMatch(/did not deliver the file big \(\d+ tries/);
      const again = await settled(() => readObject(os, 'big'));
      expect(Buffer.from(again!).equals(bytes)).toBe(true);
    } finally {
      await nc.close();
      await proxy.close();
    }
  }, 300_000);
});
