import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalJson, GENESIS_HASH, sha256Hex } from '@gatehouse/shared';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * Red team (issue 14), for real: the hostile repository and the edited log against `gatehouse
 * replay --mode execution` (real CLI, scripted model, real sandboxes). The promise: a replay never
 * touches the repository and never runs a non-read-only action unless asked to.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');

interface Event {
  type: string;
  runId: string;
  data: Record<string, unknown>;
}

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function scratch(prefix: string): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}
const git = (dir: string, args: string[]) =>
  execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {
    encoding: 'utf8',
  });

/** A repository whose own .npmrc sends npm's logs and cache into the workspace: `npm ls` then writes there. */
function hostileRepo(): string {
  const dir = scratch('gh-rt14-repo-');
  writeFileSync(path.join(dir, 'a.txt'), 'one\n');
  writeFileSync(path.join(dir, 'package.json'), '{"name":"x","version":"1.0.0"}\n');
  writeFileSync(path.join(dir, '.npmrc'), 'logs-dir=./npmlogs\ncache=./npmcache\nupdate-notifier=false\n');
  git(dir, ['init', '-q']);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'start']);
  return dir;
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(dir, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(path.join(dir, r));
      if (st.isDirectory()) walk(r);
      else {
        const content = st.isSymbolicLink() ? '' : readFileSync(path.join(dir, r));
        out[r] = `${st.mode.toString(8)}:${createHash('sha256').update(content).digest('hex')}`;
      }
    }
  };
  walk('');
  return out;
}

const env = { ...process.env, CI: 'true' };

function record(dir: string, turns: unknown[]): { stateDir: string; runId: string; events: Event[] } {
  const stateDir = scratch('gh-rt14-state-');
  const script = path.join(scratch('gh-rt14-script-'), 'script.json');
  writeFileSync(script, JSON.stringify({ turns }));
  const r = spawnSync(
    process.execPath,
    [cli, 'run', 'look around', '--repo', dir, '--model', `scripted:${script}`, '--mode', 'sandboxed-auto'].concat([
      '--check',
      'cat a.txt',
      '--state-dir',
      stateDir,
      '--json',
    ]),
    { encoding: 'utf8', timeout: 180_000, env, input: '' },
  );
  expect(r.status, r.stderr).toBe(0);
  const events = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Event);
  return { stateDir, runId: events[0]!.runId, events };
}

function replay(rec: { stateDir: string; runId: string }, extra: string[] = []) {
  const r = spawnSync(
    process.execPath,
    [cli, 'replay', rec.runId, '--mode', 'execution', '--state-dir', rec.stateDir, '--json', ...extra],
    { encoding: 'utf8', timeout: 180_000, env, input: '' },
  );
  const events = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Event);
  const steps = events.filter((e) => e.type === 'replay.execution').map((e) => e.data);
  return { status: r.status, stderr: r.stderr, steps, runs: readdirSync(path.join(rec.stateDir, 'runs')) };
}

describe('red team 14: gatehouse replay --mode execution against a hostile repository and an edited log', () => {
  it('`npm ls` (read-only to the classifier) that wrote through the repository .npmrc is not re-run', async () => {
    const dir = hostileRepo();
    const rec = record(dir, [{ toolCalls: [{ name: 'bash', input: { command: 'npm ls' } }] }, { final: 'ok (obs-1)' }]);
    const npmLs = rec.events.find(
      (e) => e.type === 'tool.execution.completed' && (e.data as { callId: string }).callId.startsWith('call_'),
    )!;
    // The recorded run shows the write: npm put its log into the workspace.
    expect((npmLs.data as { filesChanged: string[] }).filesChanged.some((f) => f.startsWith('npmlogs/'))).toBe(true);
    const before = snapshot(dir);
    const r = replay(rec);
    expect(r.status, r.stderr).toBe(0);
    expect(r.steps[0]).toMatchObject({ tool: 'bash', readOnly: false, outcome: 'skipped', replayed: null });
    expect(snapshot(dir)).toEqual(before);
  }, 400_000);

  it('a log edited without the key (intent and execution rewritten, chain recomputed) is refused', async () => {
    const dir = hostileRepo();
    const rec = record(dir, [
      { toolCalls: [{ name: 'bash', input: { command: 'cat a.txt' } }] },
      { final: 'one (obs-1)' },
    ]);
    const file = path.join(rec.stateDir, 'runs', rec.runId, 'events.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    let prev = GENESIS_HASH;
    const forged = lines.map((line) => {
      const e = JSON.parse(line.replaceAll('cat a.txt', 'rm -f a.txt')) as Record<string, unknown>;
      e.prevHash = prev;
      const { hash: _h, mac: _m, ...rest } = e;
      e.hash = sha256Hex(canonicalJson(rest));
      prev = e.hash as string;
      return canonicalJson(e);
    });
    writeFileSync(file, forged.join('\n') + '\n');
    const before = snapshot(dir);
    const runsBefore = readdirSync(path.join(rec.stateDir, 'runs'));
    const r = replay(rec, ['--allow-writes']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/fails gatehouse verify/);
    expect(r.steps).toEqual([]);
    expect(r.runs).toEqual(runsBefore);
    expect(snapshot(dir)).toEqual(before);
  }, 400_000);
});
