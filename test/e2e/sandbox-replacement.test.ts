import { spawnSync } from 'node:child_process';
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
 * A sandbox killed under a running call (`docker kill`, as the soak does): the worker's run goes on
 * in a fresh sandbox from its last checkpoint instead of failing. The call that was running is
 * recorded as lost with its outcome unknown, shown to the model as such and never run again; the
 * kill, the replacement and every event are in the store's log.
 */
let nats: NatsCluster;
let store: string;
const workers: WorkerProcess[] = [];
const runs: Array<{ runId: string; env: NodeJS.ProcessEnv }> = [];

beforeAll(async () => {
  const images = await ensureImages({ prune: false });
  nats = await startNatsCluster(images.nats, 1);
  store = nats.servers[0]!;
}, 120_000);

afterAll(async () => {
  for (const w of workers) w.child.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
  for (const { runId, env } of runs) gatehouse(['sandbox', 'reap', '--run', runId], env);
  await nats?.stop();
});

function submit(env: NodeJS.ProcessEnv, script: unknown): string {
  const repo = repoWith({ 'README.md': '# replaced\n' });
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

const ofType = (events: Event[], type: string) => events.filter((e) => e.type === type);

describe('a sandbox lost under a worker run', () => {
  it('the run continues in a fresh sandbox from its checkpoint; the call in flight lost, not run again', async () => {
    const env = installationEnv();
    const script = {
      turns: [
        { toolCalls: [{ name: 'write_file', input: { path: 'a.txt', content: 'one\n' } }] },
        { toolCalls: [{ name: 'bash', input: { command: 'sleep 30; echo two > b.txt' } }] },
        { toolCalls: [{ name: 'bash', input: { command: 'cat a.txt; ls' } }] },
        { final: 'a.txt holds one (obs-3).' },
      ],
    };
    const runId = submit(env, script);
    runs.push({ runId, env });
    const worker = startWorkerProcess(store, env, ['--exit-when-idle', '30s']);
    workers.push(worker);
    // The slow call has started (on record in the store) and the checkpoint of the write is saved.
    const sleeping = await waitFor(
      () => ofType(storeEvents(store, runId, env), 'tool.execution.started').length >= 2,
      120_000,
      500,
    );
    expect(sleeping, worker.stderr()).toBe(true);
    const started = ofType(storeEvents(store, runId, env), 'sandbox.started');
    expect(started).toHaveLength(1);
    const container = String(started[0]!.data.containerId);
    await new Promise((r) => setTimeout(r, 1500)); // well inside the 30 s sleep
    const kill = spawnSync('docker', ['kill', container], { encoding: 'utf8' });
    expect(kill.status, kill.stderr).toBe(0);

    const done = await waitFor(() => storeEvents(store, runId, env).at(-1)?.type === 'run.completed', 150_000, 1000);
    expect(done, worker.stderr()).toBe(true);
    const events = storeEvents(store, runId, env);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });

    // The kill is on record, then the runtime's own resume in a second sandbox, from the checkpoint.
    const lostAt = events.findIndex((e) => e.type === 'sandbox.lost');
    expect(lostAt).toBeGreaterThan(0);
    expect(events[lostAt]!.data).toMatchObject({ sandboxId: started[0]!.data.sandboxId });
    const resumed = ofType(events, 'run.resumed');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({ actor: 'runtime', data: { workspaceFrom: 'checkpoint' } });
    expect(resumed[0]!.seq).toBeGreaterThan(lostAt);
    const sandboxes = ofType(events, 'sandbox.started').map((e) => e.data.containerId);
    expect(sandboxes).toHaveLength(2);
    expect(sandboxes[1]).not.toBe(container);

    // The call that was sleeping: started once, completed `lost` with its outcome unknown, never again.
    const sleepCall = ofType(events, 'tool.intent').find((e) => String(JSON.stringify(e.data)).includes('sleep 30'));
    const callId = String(sleepCall?.data.callId);
    const startsOf = (id: string) => ofType(events, 'tool.execution.started').filter((e) => e.data.callId === id);
    expect(startsOf(callId)).toHaveLength(1);
    const completion = ofType(events, 'tool.execution.completed').find((e) => e.data.callId === callId);
    expect(completion?.data.status).toBe('lost');
    expect(String((completion?.data.error as { message?: string })?.message)).toContain('its outcome is unknown');
    const shown = ofType(events, 'tool.observation').find((e) => e.data.callId === callId);
    expect(String(shown?.data.content)).toContain('[no result: the sandbox was lost while this ran');
    for (const e of ofType(events, 'tool.execution.started'))
      expect(startsOf(String(e.data.callId)), String(e.data.callId)).toHaveLength(1);

    // The fresh sandbox holds the checkpoint's a.txt, and nothing of the lost call.
    const last = ofType(events, 'tool.observation').at(-1);
    expect(String(last?.data.content)).toContain('one');
    expect(String(last?.data.content)).not.toContain('b.txt');

    // No event lost: every seq once, in order; the log verifies from the store; the queue says completed.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(gatehouse(['verify', runId, '--store', store], env).status).toBe(0);
    const status = gatehouse(['status', '--store', store, '--json'], env);
    const run = (
      JSON.parse(status.stdout) as { runs: Array<{ runId: string; state: string; status?: string }> }
    ).runs.find((r) => r.runId === runId);
    expect(run).toMatchObject({ state: 'completed', status: 'final' });
  }, 300_000);
});
