import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Shared by the replay e2e tests (test/e2e/replay-*.test.ts): a real recorded run, and the CLI on it. */
export const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
export type Event = { type: string; data: Record<string, unknown>; runId: string };

/** The fix of the failing-test example, each claim cited: the run ends final. */
export const FIX = [
  { toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] },
  { toolCalls: [{ name: 'read_file', input: { path: 'src/math.js' } }] },
  {
    toolCalls: [
      { name: 'edit_file', input: { path: 'src/math.js', oldText: 'return a - b;', newText: 'return a + b;' } },
    ],
  },
  { toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] },
  { final: 'Fixed add() in src/math.js (obs-3). The tests pass now (obs-4); they failed before (obs-1).' },
];

export function writeJson(value: unknown, name = 'file.json'): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-replay-e2e-')), name);
  writeFileSync(file, JSON.stringify(value));
  return file;
}

/** gatehouse with these arguments; CI=true, nothing on stdin. */
export function gatehouse(args: string[], timeout = 180_000) {
  return spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    timeout,
    env: { ...process.env, CI: 'true' },
    input: '',
  });
}

export function jsonLines(stdout: string): Event[] {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);
}

/** A real `gatehouse run` (real sandbox, scripted model) on a copy of the failing-test example. */
export function recordedRun(policy: unknown, turns: unknown[] = FIX) {
  const repo = mkdtempSync(path.join(os.tmpdir(), 'gh-replay-repo-'));
  cpSync(path.join(root, 'examples/failing-test'), repo, { recursive: true });
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-replay-state-'));
  const r = gatehouse([
    'run',
    'fix the failing tests',
    '--repo',
    repo,
    '--model',
    `scripted:${writeJson({ turns }, 'script.json')}`,
    '--policy',
    writeJson(policy, 'policy.json'),
    '--json',
    '--state-dir',
    stateDir,
  ]);
  const events = jsonLines(r.stdout);
  const runId = events[0]?.runId ?? '';
  return { r, events, runId, repo, stateDir, runDir: path.join(stateDir, 'runs', runId) };
}

/** A hash of every file under a folder, by path and content. */
export function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else h.update(`${path.relative(dir, p)} ${createHash('sha256').update(readFileSync(p)).digest('hex')}\n`);
    }
  };
  walk(dir);
  return h.digest('hex');
}
