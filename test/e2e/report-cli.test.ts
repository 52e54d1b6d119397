import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { MARKDOWN_MAX_CHARS, REPORT_VERSION, RunReport } from '@gatehouse/orchestrator';

/** A real run through the CLI (a real sandbox, the scripted demo model), then its report and `show --output`. */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const example = path.join(root, 'examples/failing-test');

function gatehouse(args: string[], stateDir: string) {
  return spawnSync(process.execPath, [cli, ...args, '--state-dir', stateDir], { encoding: 'utf8', timeout: 120_000 });
}

describe('gatehouse report (the real CLI after a real run)', () => {
  it('writes the Markdown and JSON reports of the latest run, and show --output prints what the model saw', () => {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'gh-report-repo-'));
    cpSync(example, repo, { recursive: true });
    const state = mkdtempSync(path.join(os.tmpdir(), 'gh-report-runs-'));
    const out = mkdtempSync(path.join(os.tmpdir(), 'gh-report-out-'));
    onTestFinished(() => {
      for (const d of [repo, state, out]) rmSync(d, { recursive: true, force: true });
    });
    const run = gatehouse(
      [
        'run',
        'fix the failing tests',
        '--repo',
        repo,
        '--model',
        `scripted:${path.join(root, 'examples/scripts/fix-failing-test.json')}`,
        '--policy',
        path.join(example, '.gatehouse/policy.json'),
        '--json',
      ],
      state,
    );
    expect(run.status, run.stderr).toBe(0);

    const md = path.join(out, 'report.md');
    const r1 = gatehouse(['report', 'latest', '--format', 'md', '--out', md], state);
    expect(r1.status, r1.stderr).toBe(0);
    expect(r1.stdout).toBe('');
    const text = readFileSync(md, 'utf8');
    expect(text.length).toBeLessThan(MARKDOWN_MAX_CHARS);
    expect(text).toMatch(/^## ✅ gatehouse run `run_[\w-]+`: final\n/);
    expect(text).toContain('**Outcome:** final (exit 0), stop reason `final_answer`');
    expect(text).toContain('- file `src/math.js`');
    expect(text).toMatch(/<details><summary>Diff: \d+ lines<\/summary>\n\n```diff\n[\s\S]*\+ {2}return a \+ b;/);
    expect(text).toMatch(/- exit 1: `node --test` \(call `[\w-]+`, `obs-1`\)/);
    expect(text).toMatch(/- exit 0: `node --test` \(call `[\w-]+`, `obs-4`\)/);
    expect(text).toContain('Fixed add() in src/math.js');

    const json = path.join(out, 'report.json');
    const r2 = gatehouse(['report', 'latest', '--format', 'json', '--out', json], state);
    expect(r2.status, r2.stderr).toBe(0);
    const report = RunReport.parse(JSON.parse(readFileSync(json, 'utf8')));
    expect(report.version).toBe(REPORT_VERSION);
    expect(report.outcome).toMatchObject({ status: 'final', stopReason: 'final_answer', exitCode: 0 });
    expect(report.changes).toMatchObject({ files: ['src/math.js'], applied: false, diffFile: 'changes.diff' });
    expect(report.changes.diff).toContain('+  return a + b;');
    expect(report.commands.map((c) => [c.command, c.exitCode])).toEqual([
      ['node --test', 1],
      ['node --test', 0],
    ]);
    expect(report.usage.inputTokens).toBeGreaterThanOrEqual(0);
    expect(report.run.turns).toBe(5);

    // Without --out: the same report on stdout.
    const r3 = gatehouse(['report', report.run.runId.slice(0, 12), '--format', 'json'], state);
    expect(r3.status, r3.stderr).toBe(0);
    expect(JSON.parse(r3.stdout)).toEqual(JSON.parse(readFileSync(json, 'utf8')));

    const show = gatehouse(['show', 'latest', '--output'], state);
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/tool\.observation\s+obs-1 failed\n(\s+\| .*\n)*\s+\| .*fail 1/);

    // Exit codes: a run that is not there, a format that is not one.
    expect(gatehouse(['report', 'run_nosuchrun', '--format', 'md'], state).status).toBe(1);
    const bad = gatehouse(['report', 'latest', '--format', 'pdf'], state);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('must be md, json or html');
  });
});
