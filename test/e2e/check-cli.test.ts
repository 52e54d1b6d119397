import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyLog } from '@gatehouse/orchestrator';

/**
 * The check that decides success, through the real CLI, a real sandbox and the scripted model, on
 * the failing-test example (`node --test` fails until add() adds).
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const CHECK = 'node --test';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function scratch(prefix: string): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}
function repo(config?: unknown): string {
  const dir = scratch('gh-check-repo-');
  cpSync(path.join(root, 'examples/failing-test'), dir, { recursive: true });
  if (config !== undefined) writeFileSync(path.join(dir, '.gatehouse', 'config.json'), JSON.stringify(config));
  return dir;
}
function file(name: string, content: unknown): string {
  const dir = scratch('gh-check-');
  mkdirSync(dir, { recursive: true });
  const f = path.join(dir, name);
  writeFileSync(f, JSON.stringify(content));
  return f;
}
/** The policy these runs are held to: the test command, edits to src/, reads; anything novel would ask (and pause). */
const POLICY = {
  mode: 'confirm-novel',
  allow: ['bash(node --test*)', 'bash(true)', 'edit_file(src/**)', 'read_file(**)'],
};

interface Event {
  type: string;
  actor: string;
  data: Record<string, unknown>;
  runId: string;
}
function gatehouse(
  dir: string,
  turns: unknown[],
  extra: string[] = [],
  policy: unknown = POLICY,
  stateDir = scratch('gh-check-runs-'),
) {
  const r = spawnSync(
    process.execPath,
    [
      cli,
      'run',
      'fix the failing test',
      '--repo',
      dir,
      '--model',
      `scripted:${file('script.json', { turns })}`,
      '--policy',
      file('policy.json', policy),
      '--state-dir',
      stateDir,
      '--json',
      ...extra,
    ],
    { encoding: 'utf8', timeout: 120_000, env: { ...process.env, CI: 'true' }, input: '' },
  );
  const events = parse(r.stdout);
  const runDir = path.join(stateDir, 'runs', events[0]?.runId ?? 'none');
  return { status: r.status, stderr: r.stderr, events, runDir };
}
function parse(stdout: string): Event[] {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);
}
/** Any other gatehouse command, headless. */
function command(args: string[]) {
  return spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, CI: 'true' },
    input: '',
  });
}
const of = (events: Event[], type: string) => events.filter((e) => e.type === type).map((e) => e.data);

const read = { toolCalls: [{ name: 'read_file', input: { path: 'src/math.js' } }] };
const edit = (from: string, to: string) => ({
  toolCalls: [{ name: 'edit_file', input: { path: 'src/math.js', oldText: from, newText: to } }],
});
const fix = edit('return a - b;', 'return a + b;');
/** Still wrong (add(2, 3) is 6), and its text occurs once, unlike multiply's `return a * b;`. */
const wrongFix = edit('return a - b;', 'return a + b + 1;');
const bash = (command: string) => ({ toolCalls: [{ name: 'bash', input: { command } }] });

describe('--check decides whether a run is final (real sandbox, scripted model)', () => {
  it('the model runs the check after its last edit and it passes: gatehouse runs it again, fresh HOME, final', () => {
    const r = gatehouse(
      repo(),
      [read, fix, bash(CHECK), { final: 'Fixed add() in src/math.js (obs-2); the tests pass (obs-3).' }],
      ['--check', CHECK],
    );
    expect(r.status).toBe(0);
    // The model's pass is not the verdict (its HOME may have been prepared): gatehouse's own run is.
    expect(of(r.events, 'run.check')).toEqual([
      { command: CHECK, ranBy: 'gatehouse', callId: 'check_1', observationId: 'obs-4', exitCode: 0, passed: true },
    ]);
    expect(r.events.at(-1)).toMatchObject({
      type: 'run.completed',
      data: { status: 'final', stopReason: 'final_answer', decidedBy: 'check', filesChanged: ['src/math.js'] },
    });
    // Gatehouse's one run of its own asked the daemon for a fresh HOME; the check is on record for resume.
    const own = r.events.filter((e) => e.type === 'tool.execution.started' && e.data.callId === 'check_1');
    expect(own).toMatchObject([{ data: { input: { command: CHECK, freshHome: true } } }]);
    expect(r.events[0]).toMatchObject({ data: { config: { environment: { check: CHECK } } } });
    expect(verifyLog(path.join(r.runDir, 'events.jsonl')).ok).toBe(true);
  });

  it('the model edits and answers without running it: gatehouse runs it in the sandbox, it passes, final', () => {
    const r = gatehouse(repo(), [read, fix, { final: 'Fixed add() in src/math.js (obs-2).' }], ['--check', CHECK]);
    expect(r.status).toBe(0);
    const [check] = of(r.events, 'run.check');
    expect(check).toEqual({
      command: CHECK,
      ranBy: 'gatehouse',
      callId: 'check_1',
      observationId: 'obs-3',
      exitCode: 0,
      passed: true,
    });
    const completed = r.events.find((e) => e.type === 'tool.execution.completed' && e.data.callId === 'check_1');
    expect(completed?.data).toMatchObject({ status: 'ok', exitCode: 0 });
    const observed = r.events.find((e) => e.type === 'tool.observation' && e.data.callId === 'check_1');
    expect(String(observed?.data.content)).toMatch(/pass 2/);
    expect(r.events.at(-1)).toMatchObject({ data: { status: 'final', decidedBy: 'check' } });
  });

  it('the check fails: it goes back to the model with its output, the model fixes it, it passes: final', () => {
    const r = gatehouse(
      repo(),
      [
        read,
        wrongFix,
        { final: 'Changed add() in src/math.js (obs-2).' },
        edit('return a + b + 1;', 'return a + b;'),
        { final: 'Fixed add() in src/math.js (obs-4).' },
      ],
      ['--check', CHECK],
    );
    expect(r.status).toBe(0);
    expect(of(r.events, 'run.check')).toMatchObject([
      { ranBy: 'gatehouse', callId: 'check_1', exitCode: 1, passed: false, reason: 'exit code 1' },
      { ranBy: 'gatehouse', callId: 'check_2', exitCode: 0, passed: true },
    ]);
    const [feedback] = of(r.events, 'run.feedback');
    expect(feedback).toMatchObject({ kind: 'check', turn: 3 });
    expect(String(feedback!.reason)).toMatch(/^the check `node --test` failed \(exit code 1; obs-3/);
    expect(String(feedback!.reason)).toMatch(/<untrusted-data id="obs-3"[\s\S]*fail 1[\s\S]*<\/untrusted-data/);
    expect(r.events.at(-1)).toMatchObject({ data: { status: 'final', decidedBy: 'check' } });
  });

  it('the check fails twice: partial, exit 4, the changes kept beside the log and the repository untouched', () => {
    const dir = repo();
    const before = readFileSync(path.join(dir, 'src/math.js'), 'utf8');
    const r = gatehouse(
      dir,
      [read, wrongFix, { final: 'Changed add() (obs-2).' }, { final: 'Changed add() as asked (obs-2).' }],
      ['--check', CHECK, '--apply'],
    );
    expect(r.status).toBe(4);
    expect(of(r.events, 'run.check')).toMatchObject([
      { callId: 'check_1', passed: false },
      { callId: 'check_1', passed: false },
    ]);
    expect(of(r.events, 'run.feedback')).toHaveLength(1);
    expect(r.events.at(-1)).toMatchObject({
      type: 'run.completed',
      data: { status: 'partial', stopReason: 'check_failed', decidedBy: 'check', filesChanged: ['src/math.js'] },
    });
    // --apply writes only a final run's changes: the diff is kept, the repository is not touched.
    expect(readFileSync(path.join(r.runDir, 'changes.diff'), 'utf8')).toContain('+  return a + b + 1;');
    expect(readFileSync(path.join(dir, 'src/math.js'), 'utf8')).toBe(before);
  });

  it('`node --test || true` does not count: gatehouse runs the check itself, and a broken fix is not final', () => {
    const r = gatehouse(
      repo(),
      [
        read,
        wrongFix,
        bash(`${CHECK} || true`),
        { final: 'Changed add() (obs-2); the test command exits 0 (obs-3).' },
        { final: 'Changed add() (obs-2).' },
      ],
      ['--check', CHECK],
    );
    const mine = r.events.find((e) => e.type === 'tool.execution.completed' && e.data.callId === 'call_2_0');
    expect(mine?.data).toMatchObject({ status: 'ok', exitCode: 0 });
    expect(r.status).toBe(4);
    expect(of(r.events, 'run.check')).toMatchObject([
      { ranBy: 'gatehouse', callId: 'check_1', exitCode: 1, passed: false },
      { ranBy: 'gatehouse', callId: 'check_1', exitCode: 1, passed: false },
    ]);
    expect(r.events.at(-1)).toMatchObject({ data: { status: 'partial', stopReason: 'check_failed' } });
  });

  it("a repository's own check runs only through the gate: denied by the policy, it never runs, not final", () => {
    const dir = repo({ check: CHECK });
    const policy = { ...POLICY, allow: POLICY.allow.slice(2), deny: ['bash(node --test*)'] };
    const r = gatehouse(dir, [read, fix, { final: 'Fixed add() in src/math.js (obs-2).' }], [], policy);
    expect(r.status).toBe(4);
    expect(of(r.events, 'run.check')).toEqual([
      {
        command: CHECK,
        ranBy: 'gatehouse',
        callId: 'check_1',
        observationId: 'obs-3',
        exitCode: null,
        passed: false,
        reason: expect.stringMatching(/^it did not run: denied/) as unknown,
      },
    ]);
    const ofCheck = r.events.filter((e) => e.data.callId === 'check_1').map((e) => e.type);
    expect(ofCheck).not.toContain('tool.execution.started');
    expect(r.events.find((e) => e.type === 'tool.approval' && e.data.callId === 'check_1')?.data).toMatchObject({
      decision: 'deny',
    });
    expect(r.events.at(-1)).toMatchObject({
      data: { status: 'partial', stopReason: 'check_not_run', decidedBy: 'check' },
    });
    expect(existsSync(path.join(r.runDir, 'changes.diff'))).toBe(true);
  });

  it('a check that asks pauses the run (exit 3); approved, resume runs it once and the run ends final', () => {
    const dir = repo();
    const stateDir = scratch('gh-check-runs-');
    // The test command is not allowed here: in confirm-novel it asks, and with nobody to ask the run pauses.
    const policy = { mode: 'confirm-novel', allow: ['edit_file(src/**)', 'read_file(**)'] };
    const first = gatehouse(dir, [read, fix, { final: 'Fixed add() (obs-2).' }], ['--check', CHECK], policy, stateDir);
    expect(first.status).toBe(3);
    const asked = first.events.find((e) => e.type === 'approval.requested')?.data;
    expect(asked).toMatchObject({ callId: 'check_1', tool: 'bash', input: { command: CHECK } });
    expect(first.events.at(-1)).toMatchObject({ type: 'run.paused' });
    const runId = first.events[0]!.runId;
    const approved = command(['approve', runId, String(asked!.requestId), '--state-dir', stateDir]);
    expect(approved.status).toBe(0);
    const resumed = command(['resume', runId, '--repo', dir, '--state-dir', stateDir, '--json']);
    expect(resumed.status).toBe(0);
    // --json on resume prints the whole log: what this resume wrote follows run.resumed.
    const all = parse(resumed.stdout);
    const events = all.slice(all.findIndex((e) => e.type === 'run.resumed'));
    expect(events[0]?.type).toBe('run.resumed');
    expect(of(events, 'run.check')).toEqual([
      { command: CHECK, ranBy: 'gatehouse', callId: 'check_1', observationId: 'obs-3', exitCode: 0, passed: true },
    ]);
    // Run once, and the model was not asked again: its answer stands.
    expect(events.filter((e) => e.type === 'tool.execution.started' && e.data.callId === 'check_1')).toHaveLength(1);
    expect(events.some((e) => e.type === 'model.request')).toBe(false);
    expect(events.at(-1)).toMatchObject({
      type: 'run.completed',
      data: { status: 'final', answer: 'Fixed add() (obs-2).', decidedBy: 'check', filesChanged: ['src/math.js'] },
    });
  });

  it('the live trace shows the check and its result', () => {
    const stateDir = scratch('gh-check-runs-');
    const r = spawnSync(
      process.execPath,
      [
        cli,
        'run',
        'fix the failing test',
        '--repo',
        repo(),
        '--model',
        `scripted:${file('script.json', { turns: [read, fix, { final: 'Fixed add() (obs-2).' }] })}`,
        '--policy',
        file('policy.json', POLICY),
        '--state-dir',
        stateDir,
        '--check',
        CHECK,
      ],
      { encoding: 'utf8', timeout: 120_000, env: { ...process.env, CI: 'true' }, input: '' },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('the model did not run the check after its last change: gatehouse runs it (check_1)');
    expect(r.stdout).toMatch(/✓ check passed: node --test \(run by gatehouse, obs-3\)/);
  });
});
