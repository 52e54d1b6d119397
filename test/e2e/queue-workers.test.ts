import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatehouse, installationEnv, repoWith, storeEvents, waitFor, type WorkerProcess } from '../support/queue-cli';
import { executionsPerCall, QueueFleet, type StatusJson } from '../support/queue-fleet';

/**
 * The run queue end to end through the real CLI: `submit`, `worker` processes, `status`, on a real
 * JetStream server, each run in a real sandbox. A worker killed mid-run loses its lease and another
 * continues the run from the store's log: nothing is executed twice and no event is lost.
 */
let fleet: QueueFleet;

beforeAll(async () => {
  fleet = await QueueFleet.start();
}, 120_000);

afterAll(async () => {
  await fleet?.stop();
});

const worker = (env: NodeJS.ProcessEnv, extra: string[] = [], stateDir?: string): WorkerProcess =>
  fleet.worker(env, extra, stateDir);
const status = (env: NodeJS.ProcessEnv): StatusJson => fleet.status(env);

describe('the run queue (real CLI, real JetStream, real sandboxes)', () => {
  it('two workers share the queue: every run is done once, and status shows each completed', async () => {
    const env = installationEnv();
    const script = {
      turns: [
        { toolCalls: [{ name: 'bash', input: { command: 'echo done > out.txt' } }] },
        { final: 'Wrote out.txt (obs-1).' },
      ],
    };
    const runs = [fleet.submit(env, script), fleet.submit(env, script), fleet.submit(env, script)];
    worker(env, ['--exit-when-idle', '20s']);
    worker(env, ['--exit-when-idle', '20s']);
    const done = await waitFor(
      () => status(env).runs.filter((r) => runs.includes(r.runId) && r.state === 'completed').length === 3,
      150_000,
      1000,
    );
    expect(done, fleet.workers.map((w) => w.stderr()).join('\n---\n')).toBe(true);
    for (const runId of runs) {
      const events = storeEvents(fleet.store, runId, env);
      expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
      expect([...executionsPerCall(events).values()]).toEqual([1]);
      expect(gatehouse(['verify', runId, '--store', fleet.store], env).status).toBe(0);
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
    const runId = fleet.submit(env, script);
    fleet.reapAfter(runId, env);
    // One machine's state directory for both: the second finds the dead run's local copy, which may
    // hold events the store never took, and must continue from the store's log instead.
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-worker-state-'));
    const first = worker(env, ['--lease-ttl', '3s'], stateDir);
    // Killed while its run sleeps in the second command: started on record, never completed.
    const sleeping = await waitFor(
      () => storeEvents(fleet.store, runId, env).filter((e) => e.type === 'tool.execution.started').length >= 2,
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
    const events = storeEvents(fleet.store, runId, env);
    expect(events.at(-1)?.type).toBe('run.completed');
    for (const [call, n] of executionsPerCall(events)) expect(n, call).toBe(1);
    // No gap and no fork: every seq once, in order, and the chain verifies from the store.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(gatehouse(['verify', runId, '--store', fleet.store], env).status).toBe(0);
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
    const runId = fleet.submit(env, script, { task: 'ask first', repo: repoWith({ 'README.md': '# ask\n' }), policy });
    const w = worker(env, ['--exit-when-idle', '60s']);
    const paused = await waitFor(() => status(env).runs.some((x) => x.runId === runId && x.state === 'paused'), 90_000);
    expect(paused, w.stderr()).toBe(true);
    const pending = (status(env).runs.find((x) => x.runId === runId) as { pending?: string[] }).pending ?? [];
    expect(pending).toHaveLength(1);
    // A person elsewhere: an empty state directory, the store's copy pulled, the answer pushed back.
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'gh-answer-'));
    const approved = gatehouse(['approve', runId, pending[0]!, '--store', fleet.store, '--state-dir', elsewhere], env);
    expect(approved.status, approved.stderr).toBe(0);
    expect(storeEvents(fleet.store, runId, env).at(-1)).toMatchObject({ type: 'approval.granted' });
    const again = gatehouse(['submit', '--resume', runId, '--store', fleet.store], env);
    expect(again.status, again.stderr).toBe(0);
    const completed = await waitFor(
      () => status(env).runs.some((x) => x.runId === runId && x.state === 'completed'),
      120_000,
      1000,
    );
    expect(completed, w.stderr()).toBe(true);
    const events = storeEvents(fleet.store, runId, env);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
    expect([...executionsPerCall(events).values()]).toEqual([1]);
  }, 300_000);
});
