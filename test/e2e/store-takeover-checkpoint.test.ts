import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureImages } from '@gatehouse/orchestrator';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster';

/**
 * A worker killed after a write completed but before its checkpoint was recorded, its sandbox gone
 * with its engine: the run goes on from the store in a fresh state directory (another machine).
 * The store was held from the write's start to its checkpoint, so it has the write started, not
 * completed: resume reports it interrupted and continues from the workspace before it. Before the
 * hold, the store had the completion without a checkpoint and resume refused ("no checkpoint was saved").
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
let server: NatsCluster;
const dirs: string[] = [];
let keyDir: string;
type Event = { type: string; data: Record<string, unknown> };

function tmp(prefix: string): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
}

function gatehouse(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, CI: 'true', GATEHOUSE_KEY_FILE: path.join(keyDir, 'log.key'), ...env },
    input: '',
  });
}

const eventsOf = (text: string): Event[] =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);

beforeAll(async () => {
  const images = await ensureImages({ prune: false });
  server = await startNatsCluster(images.nats, 1);
  keyDir = tmp('gh-hold-key-');
}, 180_000);

afterAll(async () => {
  await server?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a change is in the store only with its checkpoint', () => {
  it('killed between a write and its checkpoint, the run continues from the store on another machine', () => {
    const store = server.servers[0]!;
    const repo = tmp('gh-hold-repo-');
    writeFileSync(path.join(repo, 'README.md'), '# hold\n');
    const policy = path.join(tmp('gh-hold-pol-'), 'policy.json');
    writeFileSync(policy, JSON.stringify({ mode: 'sandboxed-auto' }));
    const script = path.join(tmp('gh-hold-script-'), 'script.json');
    const turns = [
      { toolCalls: [{ name: 'write_file', input: { path: 'a.txt', content: 'one\n' } }] },
      { toolCalls: [{ name: 'write_file', input: { path: 'b.txt', content: 'two\n' } }] },
      { final: 'Wrote b.txt.' },
    ];
    writeFileSync(script, JSON.stringify({ turns }));
    const first = tmp('gh-hold-state-');
    const args = ['--repo', repo, '--policy', policy, '--model', `scripted:${script}`, '--json', '--store', store];
    const crashed = gatehouse(['run', 'write two files', ...args, '--state-dir', first], {
      GATEHOUSE_TEST_CRASH: 'before-checkpoint-recorded',
    });
    expect(crashed.signal, `exit ${crashed.status}: ${crashed.stderr.slice(-2000)}`).toBe('SIGKILL');
    const runId = (eventsOf(crashed.stdout)[0] as Event & { runId: string }).runId;
    const local = eventsOf(readFileSync(path.join(first, 'runs', runId, 'events.jsonl'), 'utf8'));
    expect(local.filter((e) => e.type === 'tool.execution.completed').map((e) => e.data.status)).toEqual(['ok']);
    // Its engine is gone with it: no sandbox to salvage.
    const ids = spawnSync('docker', ['ps', '-aq', '--filter', `label=gatehouse.run=${runId}`], { encoding: 'utf8' });
    for (const id of ids.stdout.split('\n').filter(Boolean)) spawnSync('docker', ['rm', '-f', id]);

    const exported = gatehouse(['export', runId, '--store', store]);
    expect(exported.status, exported.stderr).toBe(0);
    const stored = eventsOf(exported.stdout).map((e) => e.type);
    expect(stored).toContain('tool.execution.started');
    expect(stored).not.toContain('tool.execution.completed');

    const fresh = tmp('gh-hold-fresh-');
    const resumed = gatehouse(['resume', runId, '--json', '--state-dir', fresh, '--store', store]);
    expect(resumed.status, resumed.stderr).toBe(0);
    const log = eventsOf(readFileSync(path.join(fresh, 'runs', runId, 'events.jsonl'), 'utf8'));
    expect(log.find((e) => e.type === 'run.resumed')?.data).toMatchObject({ workspaceFrom: 'repository' });
    const completions = log.filter((e) => e.type === 'tool.execution.completed').map((e) => e.data.status);
    // The first write reported interrupted, never run twice; the second ran in the fresh sandbox.
    expect(completions).toEqual(['lost', 'ok']);
    expect(log.at(-1)).toMatchObject({ type: 'run.completed', data: { filesChanged: ['b.txt'] } });
  }, 300_000);
});
