import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureImages, LABEL } from '@gatehouse/orchestrator';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster';
import {
  gatehouse,
  installationEnv,
  policyFile,
  repoWith,
  scriptFile,
  startWorkerProcess,
  storeEvents,
  waitFor,
  type WorkerProcess,
} from '../support/queue-cli';

/**
 * `gatehouse worker --warm-pool N` end to end: the worker keeps sandboxes started, its run child
 * claims one (through the worker, sandbox/pool-link.ts) instead of starting its own, and the pool
 * is removed when the worker stops.
 */
const d = new Docker();
let nats: NatsCluster;
let stateDir: string;
let w: WorkerProcess | undefined;

/** This worker's pooled containers (its state directory's), running or not. */
async function pooled() {
  const all = await d.listContainers({ all: true, filters: { label: [LABEL.pool, `${LABEL.state}=${stateDir}`] } });
  return all;
}

beforeAll(async () => {
  const images = await ensureImages({ prune: false });
  nats = await startNatsCluster(images.nats, 1);
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-worker-pool-'));
}, 120_000);

afterAll(async () => {
  w?.child.kill('SIGKILL');
  await w?.exited;
  for (const c of await pooled().catch(() => [])) await d.getContainer(c.Id).remove({ force: true, v: true });
  const nets = await d.listNetworks({ filters: { label: [LABEL.pool] } });
  for (const n of nets)
    if ((await d.listContainers({ all: true, filters: { network: [n.Id] } })).length === 0)
      await d
        .getNetwork(n.Id)
        .remove()
        .catch(() => undefined);
  await nats?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('gatehouse worker --warm-pool', () => {
  it('runs a job in a pooled sandbox, and removes the pool when it stops', async () => {
    const env = installationEnv();
    const store = nats.servers[0]!;
    w = startWorkerProcess(store, env, ['--warm-pool', '1'], stateDir);
    // Filled: a pooled sandbox whose one-time user's file was read (its daemon waits on NATS).
    let waiting: string | undefined;
    const filled = await waitFor(
      async () => {
        const c = (await pooled()).find((x) => x.State === 'running');
        if (!c) return false;
        const listing = execFileSync('docker', ['exec', c.Id, 'ls', '-A', '/var/gatehouse'], { encoding: 'utf8' });
        if (listing.trim() !== 'identity.json.ready') return false;
        waiting = c.Labels[LABEL.sandbox];
        return true;
      },
      120_000,
      500,
    );
    expect(filled, w.stderr()).toBe(true);

    const script = {
      turns: [
        { toolCalls: [{ name: 'bash', input: { command: 'echo pooled > out.txt' } }] },
        { final: 'done (obs-1).' },
      ],
    };
    const r = gatehouse(
      [
        'submit',
        'do it',
        '--repo',
        repoWith({ 'README.md': '# pool\n' }),
        '--model',
        `scripted:${scriptFile(script)}`,
      ].concat(['--policy', policyFile(), '--store', store, '--json']),
      env,
    );
    expect(r.status, r.stderr).toBe(0);
    const runId = (JSON.parse(r.stdout) as { runId: string }).runId;
    const completed = await waitFor(
      () => storeEvents(store, runId, env).some((e) => e.type === 'run.completed'),
      150_000,
      1000,
    );
    expect(completed, w.stderr()).toBe(true);
    const events = storeEvents(store, runId, env);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
    const started = events.find((e) => e.type === 'sandbox.started')!;
    // The run's sandbox is the one the worker had waiting, claimed (not started cold).
    expect(started.data.sandboxId, `${JSON.stringify(started.data)}\n${w.stderr()}`).toBe(waiting);
    expect((started.data.timings as Record<string, number>).claim).toBeGreaterThan(0);
    expect((started.data.timings as Record<string, number>).start).toBeUndefined();

    // The pool refills with another sandbox; a stopped worker removes it.
    const refilled = await waitFor(
      async () => (await pooled()).some((c) => c.State === 'running' && c.Labels[LABEL.sandbox] !== waiting),
      120_000,
      500,
    );
    expect(refilled, w.stderr()).toBe(true);
    w.child.kill('SIGTERM');
    expect(await w.exited).toBe(0);
    expect(await pooled()).toEqual([]);
    const nets = await d.listNetworks({ filters: { label: [LABEL.pool] } });
    expect(nets.filter((n) => n.Labels?.[LABEL.sandbox] === waiting)).toEqual([]);
  }, 420_000);
});
