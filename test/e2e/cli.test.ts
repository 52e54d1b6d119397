import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '../support/sandbox';

const cli = fileURLToPath(new URL('../../orchestrator/bin/gatehouse.mjs', import.meta.url));
const gatehouse = (...args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 120_000 });

/** The CLI as a user runs it: the built bundle, real Docker and NATS behind it. */
describe('gatehouse CLI', () => {
  it('answers --help with exit 0', () => {
    const r = gatehouse('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('doctor');
  });

  it.each([
    [['bogus'], /unknown command 'bogus'/],
    [
      ['sandbox', 'smoke', '--repo', '/nonexistent/gatehouse'],
      /--repo <dir>' argument '\/nonexistent\/gatehouse' is invalid. \/nonexistent\/gatehouse is not a directory/,
    ],
    [['images', 'build', '--base', 'cloud'], /must be auto, public or local/],
    [['doctor', '--frobnicate'], /unknown option '--frobnicate'/],
  ])('exits 2 with a clear message for bad usage: %j', (args, message) => {
    const r = gatehouse(...args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('doctor --json reports every check as ok on a set-up machine', () => {
    const r = gatehouse('doctor', '--json');
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: Array<{ name: string; ok: boolean }> };
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual(
      expect.arrayContaining(['docker engine', 'sandbox image', 'nats image', 'nats']),
    );
  });

  it('sandbox smoke --json works on a repository and leaves it untouched', () => {
    const repo = makeRepo();
    const r = gatehouse('sandbox', 'smoke', '--repo', repo, '--json');
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout) as { ok: boolean; changes: { files: Array<{ path: string }> } };
    expect(report.ok).toBe(true);
    expect(report.changes.files.map((f) => f.path)).toEqual(['GATEHOUSE_SMOKE.txt']);
    expect(spawnSync('git', ['status', '--porcelain'], { cwd: repo, encoding: 'utf8' }).stdout).toBe('');
  });
});
