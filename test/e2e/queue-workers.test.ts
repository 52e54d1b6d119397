import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureImages } from '@gatehouse/orchestrator';
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
  type Event,
  type WorkerProcess,
} from '../support/queue-cli';

/**
 * The run queue end to end through the real CLI: `submit`, `worker` processes, `status`, on a real
 * JetStream server, each run in a real sandbox. A worker killed mid-run loses its lease and another
 * continues the run from the store's log: nothing is executed twice and no event is lost.
 */
let nats: NatsCluster;
let store: string;
const workers: WorkerProcess[] = [];
/** Runs a killed worker left sandboxes of: reaped at the end (their worker's state directory is gone with it). */
const reapAfter: Array<{ runId: string; env: NodeJS.ProcessEnv }> = [];

beforeAll(async () => {
  const images = await ensureImages({ prune: false });
  nats = await startNatsCluster(images.nats, 1);
  store = nats.servers[0]!;
}, 120_000);

afterAll(async () => {
  for (const w of workers) w.child.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
  for (const { runId, env } of reapAfter) gatehouse(['sandbox', 'reap', '--run', runId], env);
  await nats?.stop();
});

function worker(env: NodeJS.ProcessEnv, extra: string[] = [], stateDir?: string): WorkerProcess {
  const w = startWorkerProcess(store, env, extra, stateDir);
  workers.push(w);
  return w;
}

function submit(env: NodeJS.ProcessEnv, script: unknown, repo = repoWith({ 'README.md': '# queue\n' })): string {
  const r = gatehouse(
    ['submit', 'do it', '--repo', repo, '--model', `scripted:${scriptFile(script)}`, '--policy', policyFile()].concat([
      '--store',
      store,
      '--json',
    ]),
    env,
  );
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { runId: string }).runId;
}

interface StatusRun {
  runId: string;
  state: string;
  status?: string;
  worker?: string;
}
function status(env: NodeJS.ProcessEnv): { runs: StatusRun[]; leases: Array<{ runId: string; worker: string }> } {
  const r = gatehouse(['status', '--store', store, '--json'], env);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as ReturnType<typeof status>;
}

/** Execution starts per call: each call's side effects happened at most once. */
function executionsPerCall(events: Event[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of events)
    if (e.type === 'tool.execution.started') {
      const id = String(e.data.callId);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  return counts;
}

describe('the run queue (real CLI, real JetStream, real sandboxes)', () => {
  it('two workers share the queue: every run is done once, and status shows each completed', async () => {
    const env = installationEnv();
    const script = {
      turns: [
        { toolCalls: [{ name: 'bash', input: { command: 'echo done > out.txt' } }] },
        { final: 'Wrote out.txt (obs-1).' },
      ],
    };
    const runs = [submit(env, script), submit(env, script), submit(env, script)];
    worker(env, ['--exit-when-idle', '20s']);
    worker(env, ['--exit-when-idle', '20s']);
    const done = await waitFor(
      () => status(env).runs.filter((r) => runs.includes(r.runId) && r.state === 'completed').length === 3,
      150_000,
      1000,
    );
    expect(done, workers.map((w) => w.stderr()).join('\n---\n')).toBe(true);
    for (const runId of runs) {
      const events = storeEvents(store, runId, env);
      expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
      expect([...executionsPerCall(events).values()]).toEqual([1]);
      expect(gatehouse(['verify', runId, '--store', store], env).status).toBe(0);
    }
  }, 240_000);

  it('a worker killed mid-run: another takes it over from the log; nothing runs twice, nothing is lost', async () => {
    const env = installationEnv();
    const script = {
      turns: [
        { toolCalls: [{ name: 'write_file', input: { path: 'a.txt', content: 'one\n' } }] },
        { toolCalls: [{ name: 'bash', input: { command: 'sleep 6; echo two > b.txt' } }] },
        { toolCalls: [{ name: 'bash', input: { command: 'cat a.txt' } }] },
        { final: 'a.txt holds one (obs-3).' },
      ],
    };
    const runId = submit(env, script);
    reapAfter.push({ runId, env });
    // One machine's state directory for both: the second finds the dead run's local copy, which may
    // hold events the store never took, and must continue from the store's log instead.
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-worker-state-'));
    const first = worker(env, ['--lease-ttl', '3s'], stateDir);
    // Killed while its run sleeps in the second command: started on record, never completed.
    const sleeping = await waitFor(
      () => storeEvents(store, runId, env).filter((e) => e.type === 'tool.execution.started').length >= 2,
      90_000,
      500,
    );
    expect(sleeping, first.stderr()).toBe(true);
    const holder = status(env).leases.find((l) => l.runId === runId)?.worker;
    expect(holder).toBeDefined();
    first.child.kill('SIGKILL');
    await first.exited;
    const second = worker(env, ['--lease-ttl', '3s', '--exit-when-idle', '20s'], stateDir);
    const completed = await waitFor(
      () => status(env).runs.some((r) => r.runId === runId && r.state === 'completed'),
      150_000,
      1000,
    );
    expect(completed, second.stderr()).toBe(true);
    const run = status(env).runs.find((r) => r.runId === runId)!;
    expect(run.worker).not.toBe(holder);
    // The dead run's local copy was set aside, not appended to.
    expect(readdirSync(path.join(stateDir, 'set-aside')).filter((d) => d.startsWith(runId))).toHaveLength(1);
    const events = storeEvents(store, runId, env);
    expect(events.at(-1)?.type).toBe('run.completed');
    for (const [call, n] of executionsPerCall(events)) expect(n, call).toBe(1);
    // No gap and no fork: every seq once, in order, and the chain verifies from the store.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(gatehouse(['verify', runId, '--store', store], env).status).toBe(0);
  }, 300_000);

  it('a run that asks pauses; answered elsewhere and submitted again with --resume, a worker finishes it', async () => {
    const env = installationEnv();
    const script = {
      turns: [
        { toolCalls: [{ name: 'bash', input: { command: 'echo asked > asked.txt' } }] },
        { final: 'Wrote asked.txt (obs-1).' },
      ],
    };
    const policy = { mode: 'sandboxed-auto', ask: [{ rule: 'bash(echo asked*)', match: ['echo asked > asked.txt'] }] };
    const r = gatehouse(
      [
        'submit',
        'ask first',
        '--repo',
        repoWith({ 'README.md': '# ask\n' }),
        '--model',
        `scripted:${scriptFile(script)}`,
      ].concat(['--policy', policyFile(policy), '--store', store, '--json']),
      env,
    );
    expect(r.status, r.stderr).toBe(0);
    const runId = (JSON.parse(r.stdout) as { runId: string }).runId;
    const w = worker(env, ['--exit-when-idle', '60s']);
    const paused = await waitFor(() => status(env).runs.some((x) => x.runId === runId && x.state === 'paused'), 90_000);
    expect(paused, w.stderr()).toBe(true);
    const pending = (status(env).runs.find((x) => x.runId === runId) as { pending?: string[] }).pending ?? [];
    expect(pending).toHaveLength(1);
    // A person elsewhere: an empty state directory, the store's copy pulled, the answer pushed back.
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'gh-answer-'));
    const approved = gatehouse(['approve', runId, pending[0]!, '--store', store, '--state-dir', elsewhere], env);
    expect(approved.status, approved.stderr).toBe(0);
    expect(storeEvents(store, runId, env).at(-1)).toMatchObject({ type: 'approval.granted' });
    const again = gatehouse(['submit', '--resume', runId, '--store', store], env);
    expect(again.status, again.stderr).toBe(0);
    const completed = await waitFor(
      () => status(env).runs.some((x) => x.runId === runId && x.state === 'completed'),
      120_000,
      1000,
    );
    expect(completed, w.stderr()).toBe(true);
    const events = storeEvents(store, runId, env);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
    expect([...executionsPerCall(events).values()]).toEqual([1]);
  }, 300_000);
});
