import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, lstatSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * `gatehouse replay --mode execution` for real: a run recorded by the real CLI (scripted model, real
 * sandbox), then replayed by the real CLI into a fresh sandbox. The repository must come out of
 * every replay byte for byte as it went in (files, HEAD, index, refs: all of .git).
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const CHECK = 'grep -c one a.txt';

interface Event {
  type: string;
  runId: string;
  data: Record<string, unknown>;
}
interface Step {
  callId: string;
  tool: string;
  readOnly: boolean;
  outcome: string;
  reason?: string;
  recorded: { outputSha256: string | null; exitCode: number | null };
  replayed: { outputSha256: string; exitCode: number | null; filesChanged: string[] } | null;
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

function gitRepo(): string {
  const dir = scratch('gh-replay-repo-');
  writeFileSync(path.join(dir, 'a.txt'), 'one\n');
  git(dir, ['init', '-q']);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'start']);
  return dir;
}

/** Every file under the repository, .git included, by path: its mode and content hash. */
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

function record(dir: string, turns: unknown[]): { stateDir: string; runId: string } {
  const stateDir = scratch('gh-replay-state-');
  const script = path.join(scratch('gh-replay-script-'), 'script.json');
  writeFileSync(script, JSON.stringify({ turns }));
  const r = spawnSync(
    process.execPath,
    [cli, 'run', 'look around', '--repo', dir, '--model', `scripted:${script}`, '--mode', 'sandboxed-auto'].concat([
      '--check',
      CHECK,
      '--state-dir',
      stateDir,
      '--json',
    ]),
    { encoding: 'utf8', timeout: 180_000, env: { ...process.env, CI: 'true' }, input: '' },
  );
  expect(r.status, r.stderr).toBe(0);
  const first = JSON.parse(r.stdout.split('\n')[0]!) as Event;
  return { stateDir, runId: first.runId };
}

function replay(rec: { stateDir: string; runId: string }, extra: string[] = []) {
  const r = spawnSync(
    process.execPath,
    [cli, 'replay', rec.runId, '--mode', 'execution', '--state-dir', rec.stateDir, '--json', ...extra],
    { encoding: 'utf8', timeout: 180_000, env: { ...process.env, CI: 'true' }, input: '' },
  );
  const events = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Event);
  const steps = events.filter((e) => e.type === 'replay.execution').map((e) => e.data as unknown as Step);
  const summary = events.find((e) => e.type === 'replay.summary')?.data;
  return { status: r.status, stderr: r.stderr, events, steps, summary };
}

const READS = [
  { toolCalls: [{ name: 'read_file', input: { path: 'a.txt' } }] },
  { toolCalls: [{ name: 'bash', input: { command: 'cat a.txt' } }] },
  { toolCalls: [{ name: 'git_status', input: {} }] },
];
const WRITE_THEN_READ = [
  { toolCalls: [{ name: 'write_file', input: { path: 'b.txt', content: 'two\n' } }] },
  { toolCalls: [{ name: 'bash', input: { command: 'cat b.txt' } }] },
];
const FINAL = { final: 'a.txt says one (obs-2).' };

describe('gatehouse replay --mode execution', () => {
  it('same results: match; the write is skipped (and so is what read it) unless --allow-writes', async () => {
    const dir = gitRepo();
    const rec = record(dir, [...READS, ...WRITE_THEN_READ, FINAL]);
    const before = snapshot(dir);
    const head = git(dir, ['rev-parse', 'HEAD']);

    const plain = replay(rec);
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.steps.map((s) => [s.tool, s.outcome])).toEqual([
      ['read_file', 'same'],
      ['bash', 'same'],
      ['git_status', 'same'],
      ['write_file', 'skipped'],
      ['bash', 'skipped'],
      ['bash', 'skipped'],
    ]);
    // The last is gatehouse's own run of the check, after the write it could not see.
    expect(plain.steps[5]!.callId).toMatch(/^check_/);
    expect(plain.steps[3]!.replayed).toBeNull();
    expect(plain.summary).toMatchObject({ verdict: 'match', compared: 3, differed: 0, skipped: 3 });
    // Nothing that is not read-only ran: every call that ran is read-only.
    for (const s of plain.steps) if (s.replayed) expect(s.readOnly).toBe(true);
    for (const s of plain.steps.filter((x) => x.outcome === 'same')) {
      expect(s.recorded.outputSha256).toMatch(/^[0-9a-f]{64}$/);
      expect(s.replayed!.outputSha256).toBe(s.recorded.outputSha256);
    }
    expect(snapshot(dir)).toEqual(before);

    const writes = replay(rec, ['--allow-writes']);
    expect(writes.status, writes.stderr).toBe(0);
    expect(writes.steps.map((s) => s.outcome)).toEqual(['same', 'same', 'same', 'same', 'same', 'same']);
    expect(writes.steps[3]).toMatchObject({ readOnly: false, replayed: { filesChanged: ['b.txt'] } });
    expect(writes.events[0]!.data).toMatchObject({ replay: { of: rec.runId, mode: 'execution', allowWrites: true } });
    // The write happened in the fresh sandbox only.
    expect(snapshot(dir)).toEqual(before);
    expect(git(dir, ['rev-parse', 'HEAD'])).toBe(head);
  });

  it('a command whose output depends on the time drifts: exit 1', async () => {
    const dir = gitRepo();
    const rec = record(dir, [...READS, { toolCalls: [{ name: 'bash', input: { command: 'date +%N' } }] }, FINAL]);
    const before = snapshot(dir);
    const r = replay(rec);
    expect(r.status, r.stderr).toBe(1);
    const date = r.steps.find((s) => s.tool === 'bash' && s.outcome === 'drift');
    expect(date, JSON.stringify(r.steps)).toBeDefined();
    expect(date).toMatchObject({ readOnly: true, reason: 'the output differs' });
    expect(date!.replayed!.outputSha256).not.toBe(date!.recorded.outputSha256);
    expect(r.summary).toMatchObject({ verdict: 'drift', differed: 1 });
    expect(snapshot(dir)).toEqual(before);
  });

  it('a repository that moved on: the recorded tree is exported; a dirty start that changed is refused', async () => {
    const dir = gitRepo();
    const rec = record(dir, [...READS, FINAL]);
    writeFileSync(path.join(dir, 'a.txt'), 'changed since\n');
    git(dir, ['commit', '-q', '-am', 'later']);
    const before = snapshot(dir);
    const moved = replay(rec);
    expect(moved.status, moved.stderr).toBe(0);
    // The calls saw the recorded tree's a.txt ("one"), not the repository's HEAD now: same as recorded.
    expect(moved.steps.map((s) => s.outcome)).toEqual(['same', 'same', 'same', 'same']);
    expect(snapshot(dir)).toEqual(before);

    const dirty = gitRepo();
    writeFileSync(path.join(dirty, 'untracked.txt'), 'not committed\n');
    const rec2 = record(dirty, [...READS, FINAL]);
    writeFileSync(path.join(dirty, 'untracked.txt'), 'changed\n');
    const runs = readdirSync(path.join(rec2.stateDir, 'runs')).sort();
    const refused = replay(rec2);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/uncommitted changes/);
    expect(readdirSync(path.join(rec2.stateDir, 'runs')).sort()).toEqual(runs);
  });
});
