import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempStateDir, writeRun } from '../events/helpers';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');
const env = { ...process.env, GATEHOUSE_STATE_DIR: '' };

/** The CLI with one of its output streams read by nobody: the pipe's read end is closed before it writes. */
function withClosedReader(
  args: string[],
  closed: 'stdout' | 'stderr',
): Promise<{ code: number | null; signal: string | null; other: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child[closed].destroy();
    let other = '';
    const open = closed === 'stdout' ? child.stderr : child.stdout;
    open.setEncoding('utf8').on('data', (d: string) => (other += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, other });
    });
  });
}
const gatehouse = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { cwd: root, env, encoding: 'utf8' });

/** `gatehouse … | head`: a reader that goes away ends the output quietly, the command's work and exit code intact. */
describe('gatehouse with a reader that goes away (EPIPE)', () => {
  let state: string;
  let policy: string;
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
  });

  const setup = (): void => {
    state = tempStateDir();
    writeRun(state, 'piped_run', 14);
    policy = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-pipe-policy-')), 'policy.json');
    writeFileSync(policy, JSON.stringify({ allow: ['bash(ls*)'] }));
  };

  const commands: Array<[string, () => string[], number]> = [
    ['runs', () => ['runs', '--state-dir', state], 0],
    ['runs --json', () => ['runs', '--json', '--state-dir', state], 0],
    ['show', () => ['show', 'piped_run', '--state-dir', state], 0],
    ['show --tree', () => ['show', 'piped_run', '--tree', '--state-dir', state], 1],
    ['show --tree --json', () => ['show', 'piped_run', '--tree', '--json', '--state-dir', state], 1],
    ['approvals', () => ['approvals', 'piped_run', '--state-dir', state], 0],
    ['verify', () => ['verify', 'piped_run', '--state-dir', state], 0],
    ['verify --json', () => ['verify', 'piped_run', '--json', '--state-dir', state], 0],
    [
      'policy check',
      () => ['policy', 'check', '--tool', 'bash', '--input', '{"command":"ls"}', '--policy', policy, '--repo', root],
      0,
    ],
    ['--help', () => ['--help'], 0],
    ['runs prune --dry-run', () => ['runs', 'prune', '--dry-run', '--older-than', '1m', '--state-dir', state], 0],
  ];

  // show --tree exits 1 on the sample run: it never completed, and the tree says so.
  it.each(commands)('%s: exits with its own code, no stack trace, the run untouched', async (_name, args, code) => {
    setup();
    // What it prints when someone reads it: there is output to lose.
    const normal = gatehouse(args());
    expect(normal.status).toBe(code);
    expect(normal.stdout.length).toBeGreaterThan(0);

    const r = await withClosedReader(args(), 'stdout');
    // Its stderr is what it always says (show --tree lists the sample run's problems there), and no trace.
    expect(r.other).toBe(normal.stderr);
    expect(r.other).not.toMatch(/EPIPE|\n\s+at /);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(code);
    expect(existsSync(path.join(state, 'runs', 'piped_run', 'writer.lock'))).toBe(false);
    expect(gatehouse(['verify', 'piped_run', '--state-dir', state]).status).toBe(0);
  });

  it('an error message nobody reads (stderr closed) keeps its exit code and prints no trace to stdout', async () => {
    setup();
    const normal = gatehouse(['show', 'no_such_run', '--state-dir', state]);
    expect(normal.stderr).toMatch(/no_such_run/);
    const r = await withClosedReader(['show', 'no_such_run', '--state-dir', state], 'stderr');
    expect(r.code).toBe(normal.status);
    expect(r.code).not.toBe(0);
    expect(r.other).toBe('');
  });
});
