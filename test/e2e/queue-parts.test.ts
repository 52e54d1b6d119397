import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { NatsConnection } from 'nats';
import tarStream from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureImages } from '@gatehouse/orchestrator';
import { LogKey } from '../../orchestrator/src/events/key';
import { Lease } from '../../orchestrator/src/queue/lease';
import { queueNames } from '../../orchestrator/src/queue/names';
import { ensureQueue, type QueueHandles } from '../../orchestrator/src/queue/queue-setup';
import { extractSnapshot, putSnapshot } from '../../orchestrator/src/queue/snapshot';
import { readRunRecord, sealRunRecord, updateRunRecord } from '../../orchestrator/src/queue/run-record';
import { queueStatus } from '../../orchestrator/src/queue/status';
import { submitResume, submitRun } from '../../orchestrator/src/queue/submit';
import { connectWithin, startNatsCluster, type NatsCluster } from '../support/nats-cluster';

/**
 * The run queue's parts on a real JetStream server (gatehouse's NATS image): leases, repository
 * snapshots through the object store, and submitting. The workers' end to end is queue-workers.
 */
let server: NatsCluster;
let nc: NatsConnection;
let q: QueueHandles;

beforeAll(async () => {
  const images = await ensureImages({ prune: false });
  server = await startNatsCluster(images.nats, 1);
  nc = await connectWithin(server.servers[0]!, 20_000);
  const keyDir = mkdtempSync(path.join(os.tmpdir(), 'gh-queue-key-'));
  const key = LogKey.load({ env: { GATEHOUSE_KEY_FILE: path.join(keyDir, 'log.key') } });
  q = await ensureQueue(nc, queueNames(key.id), key, { leaseTtlMs: 1500 });
}, 120_000);

afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

const holder = (worker: string) => ({ worker, host: 'test', since: new Date().toISOString() });

describe('a run lease', () => {
  it('has one holder; the other is told who holds it; a release frees it for the next', async () => {
    const a = await Lease.acquire(q.leases, 'run_lease1aaa', holder('wkr_a'));
    expect(a).toBeInstanceOf(Lease);
    const b = await Lease.acquire(q.leases, 'run_lease1aaa', holder('wkr_b'));
    expect(b).toEqual({ heldBy: expect.objectContaining({ worker: 'wkr_a' }) as unknown });
    expect(await (a as Lease).renew()).toBe('renewed');
    await (a as Lease).release();
    expect(await Lease.acquire(q.leases, 'run_lease1aaa', holder('wkr_b'))).toBeInstanceOf(Lease);
  });

  it('is lost by a holder that stops renewing: it expires, another takes it, the old holder is told', async () => {
    const a = (await Lease.acquire(q.leases, 'run_lease2aaa', holder('wkr_a'))) as Lease;
    // Not renewed for longer than the bucket's TTL (1.5 s): the entry expires.
    let taken: Lease | { heldBy?: unknown } = {};
    for (let i = 0; i < 40 && !(taken instanceof Lease); i++) {
      await new Promise((r) => setTimeout(r, 250));
      taken = await Lease.acquire(q.leases, 'run_lease2aaa', holder('wkr_b'));
    }
    expect(taken).toBeInstanceOf(Lease);
    expect(await a.renew()).toBe('lost');
    // The old holder's release must not free the new holder's lease.
    await a.release();
    expect(await Lease.acquire(q.leases, 'run_lease2aaa', holder('wkr_c'))).toEqual({
      heldBy: expect.objectContaining({ worker: 'wkr_b' }) as unknown,
    });
  });

  it("tells a holding worker at once when its entry is overwritten by someone else's", async () => {
    const a = (await Lease.acquire(q.leases, 'run_lease3aaa', holder('wkr_a'))) as Lease;
    const lost = new Promise<string>((resolve) => a.hold(200, 1500, resolve));
    await q.leases.put('run_lease3aaa', JSON.stringify(holder('wkr_x')));
    await expect(lost).resolves.toMatch(/another worker/);
  });
});

function repo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-snap-'));
  writeFileSync(path.join(dir, 'README.md'), '# snapshot\n');
  mkdirSync(path.join(dir, 'bin'));
  writeFileSync(path.join(dir, 'bin/tool.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  symlinkSync('README.md', path.join(dir, 'link'));
  spawnSync('git', ['init', '-q'], { cwd: dir });
  writeFileSync(path.join(dir, 'uncommitted.txt'), 'not committed\n');
  return dir;
}

describe('a repository snapshot', () => {
  it('comes back as it was: files, modes, links, .git and uncommitted files', async () => {
    const dir = repo();
    const snap = await putSnapshot(q.snapshots, 'run_snap1aaaa', dir);
    const dest = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-snap-out-')), 'repo');
    await extractSnapshot(q.snapshots, snap, dest);
    expect(readFileSync(path.join(dest, 'uncommitted.txt'), 'utf8')).toBe('not committed\n');
    expect(lstatSync(path.join(dest, 'bin/tool.sh')).mode & 0o111).not.toBe(0);
    expect(readlinkSync(path.join(dest, 'link'))).toBe('README.md');
    expect(existsSync(path.join(dest, '.git/HEAD'))).toBe(true);
  });

  it('is refused when its bytes are not the ones the job names, and nothing is left behind', async () => {
    const snap = await putSnapshot(q.snapshots, 'run_snap2aaaa', repo());
    const parent = mkdtempSync(path.join(os.tmpdir(), 'gh-snap-out-'));
    const dest = path.join(parent, 'repo');
    await expect(extractSnapshot(q.snapshots, { ...snap, sha256: 'f'.repeat(64) }, dest)).rejects.toThrow(
      /does not match its job/,
    );
    expect(existsSync(dest)).toBe(false);
    expect(spawnSync('ls', ['-A', parent], { encoding: 'utf8' }).stdout).toBe('');
  });

  it('never writes outside its folder or makes devices and hard links, whatever the tar holds', async () => {
    const pack = tarStream.pack();
    pack.entry({ name: 'ok.txt' }, 'fine\n');
    pack.entry({ name: '../escaped.txt' }, 'out\n');
    pack.entry({ name: 'hard', type: 'link', linkname: '/etc/passwd' });
    pack.entry({ name: 'fifo', type: 'fifo' });
    pack.entry({ name: 'up', type: 'symlink', linkname: '..' });
    pack.entry({ name: 'up/through-link.txt' }, 'out\n');
    pack.finalize();
    const chunks: Buffer[] = [];
    for await (const c of pack as unknown as AsyncIterable<Buffer>) chunks.push(c);
    const bytes = Buffer.concat(chunks);
    const info = await q.snapshots.put({ name: 'run_snap3aaaa.tar' }, Readable.toWeb(Readable.from([bytes])) as never);
    const { createHash } = await import('node:crypto');
    const snap = {
      name: 'run_snap3aaaa.tar',
      sha256: createHash('sha256').update(bytes).digest('hex'),
      bytes: info.size,
    };
    const parent = mkdtempSync(path.join(os.tmpdir(), 'gh-snap-out-'));
    const dest = path.join(parent, 'repo');
    await extractSnapshot(q.snapshots, snap, dest).catch(() => undefined);
    expect(existsSync(path.join(parent, 'escaped.txt'))).toBe(false);
    expect(existsSync(path.join(parent, 'through-link.txt'))).toBe(false);
    expect(existsSync(path.join(dest, 'hard'))).toBe(false);
    expect(existsSync(path.join(dest, 'fifo'))).toBe(false);
  });
});

describe('submitting', () => {
  it('queues one job per run with its snapshot, shown by status as queued', async () => {
    const { runId, job } = await submitRun(nc, q, { task: 'say hi', repoDir: repo(), flags: { model: 'scripted:x' } });
    expect(job.kind).toBe('start');
    const s = await queueStatus(nc, q);
    expect(s.queue.pending).toBeGreaterThanOrEqual(1);
    expect(s.runs.find((r) => r.runId === runId)).toMatchObject({ state: 'queued', task: 'say hi' });
    expect(await q.snapshots.info(`${runId}.tar`)).not.toBeNull();
  });
});

describe("a run's record, forged by someone who can write the runs bucket but lacks the key", () => {
  it('is shown by status as not trusted, and submit --resume signs no job from it', async () => {
    const { runId } = await submitRun(nc, q, { task: 'pause me', repoDir: repo(), flags: { model: 'scripted:x' } });
    const genuine = await readRunRecord(q.runs, runId);
    expect(genuine).toMatchObject({ record: { state: 'queued' } });
    const record = (genuine as { record: Record<string, unknown> }).record;
    // The forger pauses the run, on a snapshot of their own: unsigned, then with a made-up MAC,
    // then with a MAC under another installation's key.
    const forged = { ...record, state: 'paused', snapshot: { name: 'evil.tar', sha256: 'e'.repeat(64), bytes: 1 } };
    const otherKey = LogKey.load({
      env: { GATEHOUSE_KEY_FILE: path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-other-key-')), 'log.key') },
    });
    for (const text of [
      JSON.stringify(forged),
      JSON.stringify({ ...forged, mac: 'a'.repeat(64) }),
      sealRunRecord(otherKey, forged as never),
    ]) {
      await q.runs.kv.put(runId, text);
      const s = await queueStatus(nc, q);
      expect(s.runs.find((r) => r.runId === runId)).toBeUndefined();
      expect(s.unverified).toContainEqual({ runId, problem: expect.stringMatching(/MAC/) as unknown });
      const pendingBefore = s.queue.pending;
      await expect(submitResume(nc, q, runId)).rejects.toThrow(/is not trusted/);
      expect((await queueStatus(nc, q)).queue.pending).toBe(pendingBefore);
      // A worker's update does not sign over it either: the forgery stays visible.
      expect(await updateRunRecord(q.runs, runId, { state: 'running' })).toBe('unverified');
      expect((await q.runs.kv.get(runId))?.string()).toBe(text);
    }
  });
});

describe('a full queue', () => {
  it('refuses a submit with what to do: nothing queued, the record says failed, the snapshot is gone', async () => {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info(q.names.stream);
    // Bounded at what it holds now: the next job is one too many (the bounds come back on the next ensureQueue).
    await jsm.streams.update(q.names.stream, { ...info.config, max_msgs: Math.max(1, info.state.messages) });
    try {
      if (info.state.messages === 0)
        await submitRun(nc, q, { task: 'fills it', repoDir: repo(), flags: { model: 'scripted:x' } });
      const before = (await queueStatus(nc, q)).runs.map((r) => r.runId);
      await expect(
        submitRun(nc, q, { task: 'one too many', repoDir: repo(), flags: { model: 'scripted:x' } }),
      ).rejects.toThrow(/queue GATEHOUSE_QUEUE_\w+ is full .*Start workers/);
      const added = (await queueStatus(nc, q)).runs.filter((r) => !before.includes(r.runId));
      expect(added).toMatchObject([{ state: 'failed', reason: expect.stringMatching(/^not queued/) as unknown }]);
      expect((await q.snapshots.info(`${added[0]!.runId}.tar`))?.deleted).toBe(true);
    } finally {
      await jsm.streams.update(q.names.stream, { ...info.config });
    }
  });
});
