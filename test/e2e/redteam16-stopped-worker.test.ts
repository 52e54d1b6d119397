import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatehouse, installationEnv, repoWith, storeEvents, waitFor } from '../support/queue-cli';
import { executionsPerCall, QueueFleet } from '../support/queue-fleet';

/**
 * Red team (issue 16), a stale worker: a real `gatehouse worker` SIGSTOPped mid-run for longer than
 * its lease TTL, another worker taking the run over, then SIGCONT. The stopped worker's run child
 * must be gone before the lease can pass on (it acts no more), every call is executed once, the
 * log verifies from the store, and the woken worker, which lost the lease while stopped, settles
 * nothing: the run stays completed as its new holder left it.
 */
let fleet: QueueFleet;

beforeAll(async () => {
  fleet = await QueueFleet.start();
}, 120_000);

// Stopped workers are continued before they are killed (QueueFleet.stop).
afterAll(async () => {
  await fleet?.stop();
});

/** The processes whose parent is `pid` (from /proc: the worker's run children). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid && fields[0] !== 'Z') out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const runState = (env: NodeJS.ProcessEnv, runId: string) => fleet.runState(env, runId);

describe('redteam16: a worker stopped (SIGSTOP) past its lease TTL, then continued', () => {
  it('its run child dies before the takeover, nothing runs twice, and the woken worker settles nothing', async () => {
    const env = installationEnv();
    const script = {
      turns: [
        { toolCalls: [{ name: 'write_file', input: { path: 'a.txt', content: 'one\n' } }] },
        { toolCalls: [{ name: 'bash', input: { command: 'sleep 8; echo two > b.txt' } }] },
        { toolCalls: [{ name: 'bash', input: { command: 'cat a.txt b.txt' } }] },
        { final: 'a.txt and b.txt written (obs-3).' },
      ],
    };
    const runId = fleet.submit(env, script, { repo: repoWith({ 'README.md': '# stop\n' }) });
    fleet.reapAfter(runId, env);

    const first = fleet.worker(env, ['--lease-ttl', '3s']);
    const sleeping = await waitFor(
      () => storeEvents(fleet.store, runId, env).filter((e) => e.type === 'tool.execution.started').length >= 2,
      90_000,
      500,
    );
    expect(sleeping, first.stderr()).toBe(true);
    const [child] = childrenOf(first.child.pid!);
    expect(child, 'the first worker runs the run in a child').toBeDefined();

    process.kill(first.child.pid!, 'SIGSTOP');
    // The link's deadline is half the 3 s TTL: the child is gone before the lease can run out.
    const childGone = await waitFor(() => !childrenOf(first.child.pid!).includes(child!), 2900, 100);
    expect(childGone, "the stopped worker's run child still runs past the lease TTL").toBe(true);

    const second = fleet.worker(env, ['--lease-ttl', '3s', '--exit-when-idle', '20s']);
    const completed = await waitFor(() => runState(env, runId) === 'completed', 150_000, 1000);
    expect(completed, second.stderr()).toBe(true);

    process.kill(first.child.pid!, 'SIGCONT');
    // Woken: it finds its lease gone and its child dead; it must not write the run back to queued.
    await new Promise((res) => setTimeout(res, 5000));
    expect(first.stderr()).toMatch(/lost the lease/);
    expect(runState(env, runId), first.stderr()).toBe('completed');

    const events = storeEvents(fleet.store, runId, env);
    expect(events.at(-1)?.type).toBe('run.completed');
    for (const [call, n] of executionsPerCall(events)) expect(n, call).toBe(1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(gatehouse(['verify', runId, '--store', fleet.store], env).status).toBe(0);
  }, 300_000);
});
