import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

/**
 * `gatehouse eval` with a suite that cannot run, through the CLI: exit 2, every problem with its
 * JSON path, and nothing run (no Docker needed: nothing may get that far).
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function folder(suite: unknown): { dir: string; file: string; state: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-eval-cli-'));
  made.push(dir);
  mkdirSync(path.join(dir, 'repo'));
  writeFileSync(path.join(dir, 'script.json'), JSON.stringify({ turns: [{ final: 'done' }] }));
  writeFileSync(path.join(dir, 'bad-script.json'), JSON.stringify({ turns: [{ finl: 'done' }] }));
  const file = path.join(dir, 'suite.json');
  writeFileSync(file, JSON.stringify(suite));
  return { dir, file, state: path.join(dir, 'state') };
}
const gatehouse = (args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], { cwd: root, encoding: 'utf8', timeout: 30_000, input: '' });

describe('gatehouse eval with a bad suite', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
  });

  it('a mistyped key: exit 2, the JSON path and the closest right key, nothing run', () => {
    const s = folder({
      tasks: [{ id: 'a', repositry: 'repo', task: 'x', check: 'true', model: 'scripted:script.json' }],
    });
    const r = gatehouse(['eval', s.file, '--state-dir', s.state]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${s.file}: tasks[0].repositry: unknown key; did you mean repository?`);
    expect(r.stderr).toContain('nothing was run');
    expect(existsSync(s.state)).toBe(false);
  });

  it('a task gatehouse run would refuse (its script): exit 2 before any task runs', () => {
    const s = folder({
      model: 'scripted:script.json',
      tasks: [
        { id: 'good', repository: 'repo', task: 'x', check: 'true' },
        { id: 'bad', repository: 'repo', task: 'x', check: 'true', model: 'scripted:bad-script.json' },
      ],
    });
    const r = gatehouse(['eval', s.file, '--state-dir', s.state, '--json']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/tasks\[1\]\.model: Invalid model script .*bad-script\.json/);
    expect(existsSync(s.state) ? readdirSync(s.state) : []).toEqual([]);
  });

  it('flags: --json with --format md, a bad --format or --concurrency are usage errors', () => {
    const s = folder({
      tasks: [{ id: 'a', repository: 'repo', task: 'x', check: 'true', model: 'scripted:script.json' }],
    });
    for (const args of [
      ['--json', '--format', 'md'],
      ['--format', 'html'],
      ['--concurrency', '0'],
    ]) {
      const r = gatehouse(['eval', s.file, '--state-dir', s.state, ...args]);
      expect(r.status, args.join(' ')).toBe(2);
    }
    expect(existsSync(s.state)).toBe(false);
  });
});
