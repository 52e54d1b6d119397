import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * `gatehouse run --apply` through the real CLI, a real sandbox and the scripted model: the
 * sandbox's own files hold the attack (commands the policy lets run), and --apply must refuse it
 * on the host, write nothing at all, keep the diff for review, and leave the run's outcome alone.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');

type Event = { type: string; data: Record<string, unknown>; runId: string };

function repo(extra: (dir: string) => void = () => undefined): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-apply-'));
  writeFileSync(path.join(dir, 'README.md'), '# apply test\n');
  writeFileSync(path.join(dir, 'notes.txt'), 'before\n');
  mkdirSync(path.join(dir, '.gatehouse'));
  writeFileSync(path.join(dir, '.gatehouse/policy.json'), JSON.stringify({ deny: ['bash(git push*)'] }));
  extra(dir);
  const git = (...args: string[]) => spawnSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.email=t@gatehouse', '-c', 'user.name=t', 'commit', '-qm', 'fixture');
  return dir;
}

/** A trusted policy outside the repository: everything runs in the sandbox, `generated/` may not be written. */
function policyFile(): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-pol-')), 'policy.json');
  writeFileSync(
    file,
    JSON.stringify({ mode: 'sandboxed-auto', deny: ['write_file(generated/**)', 'bash(git push*)'] }),
  );
  return file;
}

/** Runs one command in the sandbox (plus a harmless edit), then answers; with --apply. */
function runApply(dir: string, command: string) {
  const script = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-script-')), 'script.json');
  writeFileSync(
    script,
    JSON.stringify({
      turns: [
        { toolCalls: [{ name: 'bash', input: { command: `echo after > notes.txt && ${command}` } }] },
        { final: 'Updated notes.txt; the command ran as shown in obs-1.' },
      ],
    }),
  );
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-state-'));
  const r = spawnSync(
    process.execPath,
    [
      cli,
      'run',
      'x',
      '--repo',
      dir,
      '--model',
      `scripted:${script}`,
      '--policy',
      policyFile(),
      '--apply',
      '--json',
      '--state-dir',
      stateDir,
    ],
    {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, CI: 'true' },
      input: '',
    },
  );
  const events = r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);
  const completed = events.at(-1)!;
  expect(completed.type, r.stderr).toBe('run.completed');
  return {
    r,
    completed: completed.data as {
      status: string;
      applied: boolean;
      refused?: Array<{ path: string; reason: string }>;
      diffFile?: string;
    },
    runDir: path.join(stateDir, 'runs', completed.runId),
  };
}

/** Nothing was written: the harmless edit in the same run was not applied either. */
function expectNothingWritten(dir: string, out: ReturnType<typeof runApply>): void {
  expect(out.completed.status).toBe('final');
  expect(out.completed.applied).toBe(false);
  expect(readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('before\n');
  expect(out.r.status).toBe(0);
  expect(existsSync(path.join(out.runDir, out.completed.diffFile ?? 'changes.diff'))).toBe(true);
}

const refusedPaths = (out: ReturnType<typeof runApply>) => (out.completed.refused ?? []).map((f) => f.path).sort();

describe('--apply takes only verified changes (real CLI, real sandbox)', () => {
  it('a run that moves .gatehouse/policy.json away (delete + add) is refused whole', () => {
    const dir = repo();
    const policy = readFileSync(path.join(dir, '.gatehouse/policy.json'), 'utf8');
    const out = runApply(dir, 'mv .gatehouse/policy.json moved.json');
    expectNothingWritten(dir, out);
    expect(readFileSync(path.join(dir, '.gatehouse/policy.json'), 'utf8')).toBe(policy);
    expect(existsSync(path.join(dir, 'moved.json'))).toBe(false);
    expect(refusedPaths(out)).toContain('.gatehouse/policy.json');
    expect(out.r.stdout + out.r.stderr).not.toMatch(/internal_error/);
  });

  it('a symbolic link to a host file is not created', () => {
    const dir = repo();
    const out = runApply(dir, 'ln -s /etc/hostname leak');
    expectNothingWritten(dir, out);
    expect(existsSync(path.join(dir, 'leak')) || isLink(path.join(dir, 'leak'))).toBe(false);
    expect(out.completed.refused).toEqual([
      expect.objectContaining({ path: 'leak', reason: expect.stringMatching(/symbolic link/) as unknown }),
    ]);
  });

  it('an existing symbolic link in the repository is not retargeted', () => {
    const dir = repo((d) => symlinkSync('README.md', path.join(d, 'link')));
    const out = runApply(dir, 'ln -sfn /etc/passwd link');
    expectNothingWritten(dir, out);
    expect(readlinkSync(path.join(dir, 'link'))).toBe('README.md');
    expect(refusedPaths(out)).toEqual(['link']);
  });

  it('nothing is written through a directory that is a symbolic link on the host', () => {
    const outside = mkdtempSync(path.join(os.tmpdir(), 'gh-outside-'));
    const dir = repo((d) => symlinkSync(outside, path.join(d, 'out')));
    // Copy-in leaves a link leading outside the repository out of the sandbox (issue 12), so the
    // sandbox has no `out` to remove: the command makes the folder where the host has the link.
    const out = runApply(dir, 'mkdir out && echo pwned > out/evil');
    expectNothingWritten(dir, out);
    expect(existsSync(path.join(outside, 'evil'))).toBe(false);
    expect(isLink(path.join(dir, 'out'))).toBe(true);
    expect(refusedPaths(out)).toEqual(['out/evil']);
  });

  it('a file a deny rule covers is not written (the command that made it was not a redirection the gate saw)', () => {
    const dir = repo();
    const out = runApply(dir, 'mkdir -p generated && cp README.md generated/a');
    expectNothingWritten(dir, out);
    expect(existsSync(path.join(dir, 'generated'))).toBe(false);
    expect(out.completed.refused).toEqual([
      expect.objectContaining({
        path: 'generated/a',
        reason: expect.stringMatching(/denied by the policy/) as unknown,
      }),
    ]);
  });

  it('control: the same run without an attack is applied', () => {
    const dir = repo();
    const out = runApply(dir, 'printf "#!/bin/sh\\n" > tool.sh && chmod 775 tool.sh');
    // The whole completion and stderr on failure: a CI run once saw `applied: false` here, cause not shown.
    expect(out.completed, `${JSON.stringify(out.completed)}\n${out.r.stderr}`).toMatchObject({
      status: 'final',
      applied: true,
    });
    expect(readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('after\n');
    expect(lstatSync(path.join(dir, 'tool.sh')).mode & 0o7777).toBe(0o755);
  });
});

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
