import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureImages } from '@gatehouse/orchestrator';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster';

/**
 * `--store` through the real CLI, a real sandbox, the scripted model and a real JetStream server:
 * a run written through to the store, exported byte for byte, read back (verify, show, report) in
 * an empty state directory, and a paused run resumed from the store in a fresh one.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
let server: NatsCluster;
let store: string;
const dirs: string[] = [];
// The test's own installation key (and heads) outside every state directory.
let keyDir: string;

function tmp(prefix: string): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
}

function repo(): string {
  const dir = tmp('gh-store-repo-');
  writeFileSync(path.join(dir, 'README.md'), '# store test\n');
  return dir;
}

/** A trusted policy outside the repository: everything runs in the sandbox but `echo ask`, which is asked. */
function policy(): string {
  const file = path.join(tmp('gh-store-pol-'), 'policy.json');
  writeFileSync(
    file,
    JSON.stringify({ mode: 'sandboxed-auto', ask: [{ rule: 'bash(echo ask*)', match: ['echo ask >> a.log'] }] }),
  );
  return file;
}

function script(turns: unknown[]): string {
  const file = path.join(tmp('gh-store-script-'), 'script.json');
  writeFileSync(file, JSON.stringify({ turns }));
  return file;
}

function gatehouse(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, CI: 'true', GATEHOUSE_KEY_FILE: path.join(keyDir, 'log.key'), ...env },
    input: '',
  });
}

const runIdOf = (stdout: string): string => (JSON.parse(stdout.split('\n')[0]!) as { runId: string }).runId;

/** `gatehouse run TASK` of a scripted model through the store, the policy above, in `stateDir`. */
function runThroughStore(task: string, turns: unknown[], stateDir: string) {
  return gatehouse([
    'run',
    task,
    '--repo',
    repo(),
    '--policy',
    policy(),
    '--model',
    `scripted:${script(turns)}`,
    '--json',
    '--state-dir',
    stateDir,
    '--store',
    store,
  ]);
}

beforeAll(async () => {
  const images = await ensureImages({ prune: false });
  server = await startNatsCluster(images.nats, 1);
  store = server.servers[0]!;
  keyDir = tmp('gh-store-key-');
}, 180_000);

afterAll(async () => {
  await server?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('gatehouse --store (real CLI, sandbox and JetStream)', () => {
  it('a run written through: export equals events.jsonl; verify, show, report work from the store alone', () => {
    const stateDir = tmp('gh-store-state-');
    const turns = [
      { toolCalls: [{ name: 'bash', input: { command: 'echo hello > hello.txt' } }] },
      { final: 'Wrote hello.txt as obs-1 shows.' },
    ];
    const r = runThroughStore('say hello', turns, stateDir);
    expect(r.status, r.stderr).toBe(0);
    const runId = runIdOf(r.stdout);
    const local = readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'));

    const out = path.join(tmp('gh-store-out-'), 'run.jsonl');
    const exported = gatehouse(['export', runId, '--store', store, '--out', out]);
    expect(exported.status, exported.stderr).toBe(0);
    expect(readFileSync(out).equals(local)).toBe(true);
    // Without --store: the local log, the same bytes.
    const plain = gatehouse(['export', runId, '--state-dir', stateDir]);
    expect(plain.status, plain.stderr).toBe(0);
    expect(Buffer.from(plain.stdout, 'utf8').equals(local)).toBe(true);

    // An empty state directory, the store named by the environment.
    const env = { GATEHOUSE_STORE: store };
    const verified = gatehouse(['verify', runId, '--state-dir', tmp('gh-store-empty-'), '--json'], env);
    expect(verified.status, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true });
    const shown = gatehouse(['show', runId, '--state-dir', tmp('gh-store-empty-')], env);
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('echo hello > hello.txt');
    const report = gatehouse(['report', runId, '--state-dir', tmp('gh-store-empty-')], env);
    expect(report.status, report.stderr).toBe(0);
    expect(report.stdout).toContain(runId);
    const runs = gatehouse(['runs', '--state-dir', tmp('gh-store-empty-'), '--json'], env);
    expect(runs.status, runs.stderr).toBe(0);
    expect(runs.stdout).toContain(runId);
  }, 240_000);

  it('a paused run resumes from the store in a fresh state directory, and the store follows it', () => {
    const stateDir = tmp('gh-store-state-');
    const turns = [
      { toolCalls: [{ name: 'bash', input: { command: 'echo note > note.txt' } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'echo ask >> a.log' } }] },
      { final: 'Done as obs-1 and obs-2 show.' },
    ];
    const r = runThroughStore('pause here', turns, stateDir);
    expect(r.status, r.stderr).toBe(3);
    const runId = runIdOf(r.stdout);

    const fresh = tmp('gh-store-fresh-');
    const resumed = gatehouse(['resume', runId, '--json', '--state-dir', fresh, '--store', store]);
    // No one answered the ask: the run pauses again, from the workspace the store kept.
    expect(resumed.status, resumed.stderr).toBe(3);
    const events = readFileSync(path.join(fresh, 'runs', runId, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n');
    const types = events.map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types.filter((t) => t === 'run.paused')).toHaveLength(2);
    expect(types).toContain('run.resumed');
    const resumedAt = events.find((l) => l.includes('"type":"run.resumed"'))!;
    // The workspace saved at the pause came from the store's object bucket.
    expect((JSON.parse(resumedAt) as { data: { files: string[] } }).data.files).toContain('note.txt');
    const exported = gatehouse(['export', runId, '--store', store]);
    expect(exported.status, exported.stderr).toBe(0);
    expect(exported.stdout).toBe(readFileSync(path.join(fresh, 'runs', runId, 'events.jsonl'), 'utf8'));
  }, 300_000);

  it('a --store that is not nats:// is a usage error (exit 2)', () => {
    const bad = gatehouse(['verify', 'run_x', '--store', 'http://127.0.0.1:1', '--state-dir', tmp('gh-store-e-')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/not a NATS URL/);
  });
});
