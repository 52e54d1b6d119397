import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor, exitCodeOfError, type Outcome } from '../src/cli/exit-codes';
import { UsageError } from '../src/cli/usage';
import { ERROR_KINDS, type ErrorKind } from '../src/errors';
import { ModelSpecError } from '../src/providers/errors';
import { tempStateDir, writeRun } from './events/helpers';

/** The codes the CLI promised before the table existed (README, RUN_EXIT, VERIFY_EXIT, main.ts). */
const PROMISED: Record<Outcome, number> = {
  ok: 0,
  final: 0,
  failed: 1,
  usage: 2,
  paused: 3,
  partial: 4,
  cancelled: 130,
  setup_failed: 5,
  intact: 0,
  unanchored: 3,
  refused: 1,
  environment: 1,
  internal: 1,
};

describe('exitCodeFor: one table', () => {
  it.each(Object.entries(PROMISED))('%s exits %i', (outcome, code) => {
    expect(exitCodeFor(outcome as Outcome)).toBe(code);
  });

  it('has a code for every error kind, and only usage has its own', () => {
    const byKind = Object.fromEntries(ERROR_KINDS.map((k) => [k, exitCodeFor(k)]));
    expect(byKind).toEqual({ usage: 2, refused: 1, environment: 1, internal: 1 } satisfies Record<ErrorKind, number>);
  });

  it("an error's code comes from its kind; anything else thrown exits 1", () => {
    expect(exitCodeOfError(new UsageError('--json needs --tree'))).toBe(2);
    expect(exitCodeOfError(new ModelSpecError('bad spec'))).toBe(2);
    expect(exitCodeOfError(new Error('run x not found'))).toBe(1);
    expect(exitCodeOfError('a string')).toBe(1);
    expect(exitCodeOfError(undefined)).toBe(1);
  });
});

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');
const gatehouse = (args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    cwd: root,
    env: { ...process.env, GATEHOUSE_STATE_DIR: '' },
  });

/** main.ts as a user meets it: the built bundle in a child process, on errors that need no Docker. */
describe('gatehouse exits with the code of the error that stopped it', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
  });

  const script = (): string => {
    const file = path.join(tempStateDir(), 'script.json');
    writeFileSync(file, JSON.stringify({ turns: [] }));
    return file;
  };

  it.each<[string, number, (state: string) => string[], RegExp]>([
    ['--help (no error)', 0, () => ['--help'], /^$/],
    ['an unknown command (commander)', 2, () => ['bogus'], /unknown command 'bogus'/],
    [
      'a flag that needs another (UsageError)',
      2,
      (s) => ['show', 'run_a', '--json', '--state-dir', s],
      /--json needs --tree/,
    ],
    [
      'a bad model spec (ModelSpecError)',
      2,
      () => ['run', 'task', '--model', 'bogus:x'],
      /Unknown model provider "bogus"/,
    ],
    [
      'a missing model script (ScriptError)',
      2,
      () => ['run', 'task', '--model', 'scripted:/nonexistent/script.json'],
      /Model script not found/,
    ],
    [
      'a missing policy file (PolicyFileError)',
      2,
      () => ['run', 'task', '--model', `scripted:${script()}`, '--policy', '/nonexistent/policy.json'],
      /cannot read policy file \/nonexistent\/policy.json: no such file/,
    ],
    [
      'policy check without --input (PolicyCheckUsageError)',
      2,
      () => ['policy', 'check', '--tool', 'bash'],
      /--input is missing/,
    ],
    [
      'no such approval request (ApprovalCommandError)',
      1,
      (s) => ['approve', 'run_a', 'req_nope', '--state-dir', s],
      /run run_a has no approval request req_nope/,
    ],
    [
      'a run that cannot be resumed (ResumeError)',
      1,
      (s) => ['resume', 'run_a', '--state-dir', s],
      /run run_a does not record its model; it cannot be resumed/,
    ],
    [
      'an invalid run id (InvalidRunIdError)',
      1,
      (s) => ['approve', 'bad!id', 'req', '--state-dir', s],
      /invalid run id "bad!id"/,
    ],
    ['an unknown run (a plain Error)', 1, (s) => ['resume', 'nosuch', '--state-dir', s], /run nosuch not found/],
    [
      'approvals: an invalid run id (it printed nothing and exited 0)',
      1,
      (s) => ['approvals', 'bad!id', '--state-dir', s],
      /invalid run id "bad!id"/,
    ],
    [
      'approvals: an unknown run (it said "no pending approvals" and exited 0)',
      1,
      (s) => ['approvals', 'nosuch', '--state-dir', s],
      /run nosuch not found/,
    ],
    ['verify: an invalid run id is usage there', 2, (s) => ['verify', 'bad!id', '--state-dir', s], /invalid run id/],
  ])('%s exits %i', (_what, code, args, message) => {
    const state = tempStateDir();
    writeRun(state, 'run_a', 8);
    const r = gatehouse(args(state));
    expect(r.stderr).toMatch(message);
    expect(r.status).toBe(code);
  });
});
