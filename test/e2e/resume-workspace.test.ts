import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Resume after the orchestrator is SIGKILLed mid-run (real CLI, real sandbox): any later start-up
 * reaps the orphan, saving its workspace first; resume puts back every completed write and never
 * ends "files changed: none" without them. When the effects cannot be restored it refuses, saying why.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
type Event = { type: string; data: Record<string, unknown>; runId: string };

function repo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-resume-'));
  writeFileSync(path.join(dir, 'README.md'), '# resume test\n');
  return dir;
}

function policyFile(): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-pol-')), 'policy.json');
  writeFileSync(
    file,
    JSON.stringify({ mode: 'sandboxed-auto', ask: [{ rule: 'bash(echo two*)', match: ['echo two > b.txt'] }] }),
  );
  return file;
}

/** A write, then a command that asks (the run pauses), then both files read back, then the answer. */
const SCRIPT = {
  turns: [
    { toolCalls: [{ name: 'write_file', input: { path: 'a.txt', content: 'one\n' } }] },
    { toolCalls: [{ name: 'bash', input: { command: 'echo two > b.txt' } }] },
    { toolCalls: [{ name: 'bash', input: { command: 'cat a.txt b.txt' } }] },
    { final: 'Wrote a.txt and b.txt; obs-3 shows both.' },
  ],
};

function gatehouse(stateDir: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [cli, ...args, '--state-dir', stateDir], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, CI: 'true', ...env },
    input: '',
  });
}
const parse = (stdout: string): Event[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);
const logOf = (stateDir: string, runId: string): Event[] =>
  parse(readFileSync(path.join(stateDir, 'runs', runId, 'events.jsonl'), 'utf8'));

/** Paused at the ask, approved, resumed, and SIGKILLed just after `echo two > b.txt` completed. */
function crashedAfterSecondWrite() {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-state-'));
  const script = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-script-')), 'script.json');
  writeFileSync(script, JSON.stringify(SCRIPT));
  const first = gatehouse(stateDir, [
    'run',
    'x',
    '--repo',
    repo(),
    '--model',
    `scripted:${script}`,
    '--policy',
    policyFile(),
    '--json',
  ]);
  expect(first.status, first.stderr).toBe(3);
  const events = parse(first.stdout);
  const runId = events[0]!.runId;
  const requestId = String(events.find((e) => e.type === 'approval.requested')!.data.requestId);
  expect(gatehouse(stateDir, ['approve', runId, requestId]).status).toBe(0);
  const crashed = gatehouse(stateDir, ['resume', runId, '--json'], { GATEHOUSE_TEST_CRASH: 'after-completion' });
  expect(crashed.signal, `exit ${crashed.status}: ${crashed.stderr.slice(-2000)}`).toBe('SIGKILL');
  const completed = logOf(stateDir, runId).filter((e) => e.type === 'tool.execution.completed');
  expect(completed.at(-1)!.data).toMatchObject({ status: 'ok' });
  return { stateDir, runId };
}

/**
 * `gatehouse sandbox reap --run RUN` from another directory, with no --state-dir (the sandbox's label
 * says where its run lives), and the salvage it made. Another test's reaper may have saved the same
 * orphan a moment before (same key, same folder): then that salvage is the one.
 */
function reapRun(runId: string, stateDir: string): string {
  const reaped = spawnSync(process.execPath, [cli, 'sandbox', 'reap', '--run', runId], {
    encoding: 'utf8',
    cwd: os.tmpdir(),
    timeout: 120_000,
  });
  expect(reaped.status, reaped.stderr).toBe(0);
  const report = JSON.parse(reaped.stdout) as { salvaged: Array<{ runId: string; file: string }> };
  const file = report.salvaged.find((s) => s.runId === runId)?.file ?? salvagesOf(stateDir, runId)[0];
  expect(file).toMatch(/^workspace\/salvage-\d+\.json$/);
  expect(sandboxesOf(runId)).toEqual([]);
  return file!;
}

function salvagesOf(stateDir: string, runId: string): string[] {
  const dir = path.join(stateDir, 'runs', runId, 'workspace');
  return readdirSync(dir)
    .filter((f) => /^salvage-\d+\.json$/.test(f))
    .map((f) => `workspace/${f}`);
}

function sandboxesOf(runId: string): string[] {
  const r = spawnSync('docker', ['ps', '-aq', '--filter', `label=gatehouse.run=${runId}`], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean);
}

describe('resume after a crash keeps completed work (real CLI, real sandbox)', () => {
  it('another gatehouse command reaps the orphan, saving it; resume restores both writes and finishes', () => {
    const { stateDir, runId } = crashedAfterSecondWrite();
    reapRun(runId, stateDir);

    const resumed = gatehouse(stateDir, ['resume', runId]);
    expect(resumed.status, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/outcome: final/);
    expect(resumed.stdout).toMatch(/files changed: a\.txt, b\.txt/);
    expect(resumed.stdout).not.toMatch(/files changed: none/);
    const log = logOf(stateDir, runId);
    expect(log.filter((e) => e.type === 'run.resumed').at(-1)!.data).toMatchObject({
      workspaceFrom: 'previous-sandbox',
      files: ['a.txt', 'b.txt'],
    });
    const shown = log.filter((e) => e.type === 'tool.observation').at(-1)!.data.content;
    expect(String(shown)).toContain('one\ntwo\n');
    expect(log.at(-1)).toMatchObject({
      type: 'run.completed',
      data: { status: 'final', filesChanged: ['a.txt', 'b.txt'] },
    });
  });

  it('taken over in another state directory (a queue worker on the same engine), the orphan is saved there', () => {
    const { stateDir, runId } = crashedAfterSecondWrite();
    // The taking-over worker has the run's log (from the store) in its own state directory; the
    // orphan's label names the dead one's.
    const other = mkdtempSync(path.join(os.tmpdir(), 'gh-state-'));
    cpSync(path.join(stateDir, 'runs', runId), path.join(other, 'runs', runId), { recursive: true });
    const resumed = gatehouse(other, ['resume', runId]);
    expect(resumed.status, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/files changed: a\.txt, b\.txt/);
    const log = logOf(other, runId);
    expect(log.filter((e) => e.type === 'run.resumed').at(-1)!.data).toMatchObject({
      workspaceFrom: 'previous-sandbox',
      files: ['a.txt', 'b.txt'],
    });
    expect(log.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
    expect(salvagesOf(other, runId)).toHaveLength(1);
    expect(sandboxesOf(runId)).toEqual([]);
  });

  it('a salvage is restored only when its MAC-ed record vouches for it: planted or edited ones are not', () => {
    const { stateDir, runId } = crashedAfterSecondWrite();
    const file = reapRun(runId, stateDir);
    const runDir = path.join(stateDir, 'runs', runId);
    const original = readFileSync(path.join(runDir, file), 'utf8');
    // Planted with a larger number (nothing vouches for it), and the real one edited after it was saved.
    writeFileSync(
      path.join(runDir, 'workspace/salvage-999999.json'),
      original.replace('"deleted":[]', '"deleted":["README.md"]'),
    );
    writeFileSync(path.join(runDir, file), original.replace('"deleted":[]', '"deleted":["README.md"]'));
    let resumed = gatehouse(stateDir, ['resume', runId]);
    expect(resumed.status).not.toBe(0);
    expect(resumed.stderr).toMatch(
      /the saved sandbox \(workspace\/salvage-\d+\.json\) cannot be used: .* was changed after it was saved/,
    );
    // The real one put back: it is used, the planted one is not.
    writeFileSync(path.join(runDir, file), original);
    resumed = gatehouse(stateDir, ['resume', runId]);
    expect(resumed.status, resumed.stdout + resumed.stderr).toBe(0);
    const log = logOf(stateDir, runId);
    expect(log.filter((e) => e.type === 'run.resumed').at(-1)!.data).toMatchObject({
      workspaceFrom: 'previous-sandbox',
      files: ['a.txt', 'b.txt'],
    });
    expect(log.at(-1)).toMatchObject({
      type: 'run.completed',
      data: { status: 'final', filesChanged: ['a.txt', 'b.txt'] },
    });
  });

  it('when the sandbox is gone and the last checkpoint predates a completed write, resume refuses and says why', () => {
    const { stateDir, runId } = crashedAfterSecondWrite();
    for (const id of sandboxesOf(runId)) spawnSync('docker', ['rm', '-f', id]);
    // Gone unsaved: a salvage another test's reaper may have made first is removed too.
    for (const f of salvagesOf(stateDir, runId)) rmSync(path.join(stateDir, 'runs', runId, f));
    const resumed = gatehouse(stateDir, ['resume', runId]);
    expect(resumed.status).not.toBe(0);
    expect(resumed.stderr).toMatch(
      /bash call \S+ completed \(event \d+\) and may have changed the workspace, but the last checkpoint \(\d+\) was saved before it/,
    );
    expect(logOf(stateDir, runId).some((e) => e.type === 'run.completed')).toBe(false);
  });

  it('a checkpoint changed or lost after it was saved is refused, not silently skipped', () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-state-'));
    const script = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-script-')), 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    const first = gatehouse(stateDir, [
      'run',
      'x',
      '--repo',
      repo(),
      '--model',
      `scripted:${script}`,
      '--policy',
      policyFile(),
      '--json',
    ]);
    expect(first.status).toBe(3);
    const events = parse(first.stdout);
    const runId = events[0]!.runId;
    const checkpoint = events.filter((e) => e.type === 'workspace.checkpoint').at(-1)!.data as { manifest: string };
    const runDir = path.join(stateDir, 'runs', runId);
    const manifestFile = path.join(runDir, checkpoint.manifest);
    const original = readFileSync(manifestFile, 'utf8');
    expect(
      gatehouse(stateDir, [
        'approve',
        runId,
        String(events.find((e) => e.type === 'approval.requested')!.data.requestId),
      ]).status,
    ).toBe(0);

    writeFileSync(manifestFile, original.replace('"deleted":[]', '"deleted":["README.md"]'));
    let resumed = gatehouse(stateDir, ['resume', runId]);
    expect(resumed.status).not.toBe(0);
    expect(resumed.stderr).toMatch(/checkpoint \d+ cannot be restored: .* was changed after it was saved/);

    writeFileSync(manifestFile, original);
    const blobs = path.join(runDir, 'workspace/blobs');
    for (const b of readdirSync(blobs)) rmSync(path.join(blobs, b));
    resumed = gatehouse(stateDir, ['resume', runId]);
    expect(resumed.status).not.toBe(0);
    expect(resumed.stderr).toMatch(/the saved content of a\.txt .* is missing/);
    expect(logOf(stateDir, runId).some((e) => e.type === 'run.completed')).toBe(false);
  });
});
