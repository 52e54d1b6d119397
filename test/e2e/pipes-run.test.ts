import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { verifyLog } from '@gatehouse/orchestrator';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const example = path.join(root, 'examples/failing-test');
const demoScript = path.join(root, 'examples/scripts/fix-failing-test.json');
const EXIT_FOR_STATUS: Record<string, number> = { final: 0, failed: 1, paused: 3, partial: 4 };

/**
 * `gatehouse run … | head -1` through a real shell pipe: head reads one line and exits, and every
 * write after that fails with EPIPE. The run goes on unprinted to its end (docs/cli.md): its exit
 * code is its outcome's, its log whole and verified, its writer lock released.
 */
function runPipedToHead(extra: string[]) {
  const repo = mkdtempSync(path.join(os.tmpdir(), 'gh-pipe-repo-'));
  cpSync(example, repo, { recursive: true });
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-pipe-runs-'));
  const errFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-pipe-err-')), 'stderr');
  const args = [
    'run',
    'fix the failing tests',
    '--repo',
    repo,
    '--model',
    `scripted:${demoScript}`,
    '--policy',
    path.join(example, '.gatehouse/policy.json'),
    '--state-dir',
    stateDir,
    ...extra,
  ];
  const r = spawnSync(
    'bash',
    ['-c', '"$GH_NODE" "$GH_CLI" "$@" 2>"$GH_ERR" | head -1; exit "${PIPESTATUS[0]}"', 'bash', ...args],
    {
      encoding: 'utf8',
      timeout: 180_000,
      env: { ...process.env, GH_NODE: process.execPath, GH_CLI: cli, GH_ERR: errFile },
    },
  );
  return { ...r, stateDir, stderr: readFileSync(errFile, 'utf8') };
}

function checkRunIntact(stateDir: string, runId: string, code: number | null, stderr: string): void {
  const runDir = path.join(stateDir, 'runs', runId);
  expect(stderr).not.toMatch(/EPIPE|Unhandled|\n\s+at /);
  // The run reached its end: the last event is run.completed, and the exit code is its status's.
  const events = readFileSync(path.join(runDir, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; data: { status?: string } });
  const last = events.at(-1);
  expect(last?.type).toBe('run.completed');
  expect(code).toBe(EXIT_FOR_STATUS[last?.data.status ?? '']);
  expect(existsSync(path.join(runDir, 'writer.lock'))).toBe(false);
  expect(verifyLog(path.join(runDir, 'events.jsonl')).ok).toBe(true);
  const verify = spawnSync(process.execPath, [cli, 'verify', runId, '--state-dir', stateDir], { encoding: 'utf8' });
  expect(verify.status).toBe(0);
}

describe('gatehouse run piped to head (a real sandbox, the scripted model)', () => {
  it('run --json | head -1: the first event is printed, the run goes on to its end without a trace', () => {
    const r = runPipedToHead(['--json']);
    const first = JSON.parse(r.stdout) as { type: string; runId: string };
    expect(first.type).toBe('run.started');
    expect(r.stderr).toContain(`run ${first.runId} goes on without printing`);
    checkRunIntact(r.stateDir, first.runId, r.status, r.stderr);
  });

  it('the live trace | head -1: the same', () => {
    const r = runPipedToHead([]);
    const runId = /▶ (\S+)/.exec(r.stdout)?.[1];
    expect(runId).toBeDefined();
    expect(r.stderr).toContain(`run ${runId} goes on without printing`);
    checkRunIntact(r.stateDir, runId!, r.status, r.stderr);
  });
});
