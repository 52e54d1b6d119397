import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogKey } from '../../orchestrator/src/events/key';
import { queueNames } from '../../orchestrator/src/queue/names';
import { connectWithin } from '../support/nats-cluster';
import { gatehouse, installationEnv, storeEvents, waitFor } from '../support/queue-cli';
import { executionsPerCall, QueueFleet } from '../support/queue-fleet';

/**
 * The queue's retention through the real CLI (`gatehouse queue prune`) on a real JetStream server,
 * each run in a real sandbox: a completed run's snapshot goes, a run paused on an approval keeps
 * everything it needs and still resumes and completes after the prune, and the job stream is bounded.
 */
let fleet: QueueFleet;
let nc: NatsConnection;

beforeAll(async () => {
  fleet = await QueueFleet.start();
  nc = await connectWithin(fleet.store, 20_000);
}, 120_000);

afterAll(async () => {
  await nc?.close();
  await fleet?.stop();
});

interface PruneReport {
  snapshots: Array<{ name: string }>;
  records: Array<{ runId: string }>;
  kept: Array<{ runId: string; why: string }>;
}

function prune(env: NodeJS.ProcessEnv, olderThan: string): PruneReport {
  const r = gatehouse(['queue', 'prune', '--older-than', olderThan, '--store', fleet.store, '--json'], env);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as PruneReport;
}

describe('gatehouse queue prune (real CLI, real JetStream, real sandboxes)', () => {
  it('removes what ended runs left, never what a paused run needs: it resumes after the prune', async () => {
    const env = installationEnv();
    const names = queueNames(LogKey.load({ env }).id);
    const done = fleet.submit(env, {
      turns: [{ toolCalls: [{ name: 'bash', input: { command: 'echo done > out.txt' } }] }, { final: 'Done (obs-1).' }],
    });
    const asks = fleet.submit(
      env,
      {
        turns: [
          { toolCalls: [{ name: 'bash', input: { command: 'echo asked > asked.txt' } }] },
          { final: 'Wrote asked.txt (obs-1).' },
        ],
      },
      { policy: { mode: 'sandboxed-auto', ask: [{ rule: 'bash(echo asked*)', match: ['echo asked > asked.txt'] }] } },
    );
    const w = fleet.worker(env, ['--exit-when-idle', '90s']);
    const settled = await waitFor(
      () => {
        const runs = fleet.status(env).runs;
        return (
          runs.some((r) => r.runId === done && r.state === 'completed') &&
          runs.some((r) => r.runId === asks && r.state === 'paused')
        );
      },
      150_000,
      1000,
    );
    expect(settled, w.stderr()).toBe(true);
    // A snapshot a submit left without a record (it died in between), and the stream's bounds.
    const snapshots = await nc.jetstream().views.os(names.snapshots);
    await snapshots.put({ name: 'run_orphan1234.tar' }, Readable.toWeb(Readable.from([Buffer.from('x')])) as never);
    const stream = await (await nc.jetstreamManager()).streams.info(names.stream);
    expect(stream.config).toMatchObject({
      max_msgs: 10_000,
      max_bytes: 128 * 1024 * 1024,
      max_msg_size: 8 * 1024 * 1024,
      discard: 'new',
    });

    // An age no record reaches: only the completed run's snapshot goes (its end is in the store).
    const week = prune(env, '7d');
    expect(week.snapshots.map((s) => s.name)).toEqual([`${done}.tar`]);
    expect(week.records).toEqual([]);
    // Gone: its chunks, and the info a delete leaves (prune purges it).
    const present = async (name: string) => (await snapshots.info(name))?.deleted === false;
    const gone = async (name: string) => (await snapshots.info(name)) === null;
    expect(await gone(`${done}.tar`)).toBe(true);
    expect(await present(`${asks}.tar`)).toBe(true);

    // An age of zero: every ended run's record and the orphan go; the paused run is kept whole.
    const all = prune(env, '0m');
    expect(all.records.map((r) => r.runId)).toEqual([done]);
    expect(all.snapshots.map((s) => s.name)).toEqual(['run_orphan1234.tar']);
    expect(all.kept).toContainEqual({ runId: asks, why: expect.stringMatching(/paused/) as unknown });
    const after = fleet.status(env);
    expect(after.runs.map((r) => r.runId)).toEqual([asks]);
    expect(await present(`${asks}.tar`)).toBe(true);
    expect(await gone('run_orphan1234.tar')).toBe(true);

    // The paused run, answered from elsewhere, queued again and finished on its kept snapshot.
    const pending = after.runs[0]!.pending ?? [];
    expect(pending).toHaveLength(1);
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'gh-answer-'));
    const approved = gatehouse(['approve', asks, pending[0]!, '--store', fleet.store, '--state-dir', elsewhere], env);
    expect(approved.status, approved.stderr).toBe(0);
    const again = gatehouse(['submit', '--resume', asks, '--store', fleet.store], env);
    expect(again.status, again.stderr).toBe(0);
    const completed = await waitFor(() => fleet.runState(env, asks) === 'completed', 120_000, 1000);
    expect(completed, w.stderr()).toBe(true);
    const events = storeEvents(fleet.store, asks, env);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
    expect([...executionsPerCall(events).values()]).toEqual([1]);
    // Completed now: the next prune takes its snapshot too.
    expect(prune(env, '7d').snapshots.map((s) => s.name)).toEqual([`${asks}.tar`]);
  }, 360_000);
});
