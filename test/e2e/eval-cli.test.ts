import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyLog } from '@gatehouse/orchestrator';
import { DETERMINISTIC_TASK_FIELDS, EvalReport } from '../../orchestrator/src/eval/eval-report';

/**
 * The shipped suite (examples/eval) through the real CLI, real sandboxes and scripted models: each
 * task's expected result, the same deterministic fields on a second run, the example repositories
 * untouched, and headless (CI, no terminal) an ask pauses its task instead of waiting.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const suite = path.join(root, 'examples/eval/suite.json');
const REPOS = ['examples/failing-test', 'examples/hello', 'examples/eval/repos/greeter'];

const made: string[] = [];
afterAll(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function scratch(prefix: string): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}

/** Every file's path, mode and content under a directory, as one hash. */
function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const p = path.join(rel, name);
      const st = statSync(path.join(dir, p));
      h.update(`${p}\0${st.mode}\0`);
      if (st.isDirectory()) walk(p);
      else h.update(readFileSync(path.join(dir, p)));
    }
  };
  walk('');
  return h.digest('hex');
}

function gatehouse(args: string[]) {
  // CI-style: no terminal (stdin is empty, not a TTY), CI set.
  return spawnSync(process.execPath, [cli, ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 150_000,
    env: { ...process.env, CI: 'true' },
    input: '',
  });
}

function evalJson(state: string) {
  const r = gatehouse(['eval', suite, '--state-dir', state, '--concurrency', '2', '--json']);
  return { status: r.status, stderr: r.stderr, report: EvalReport.parse(JSON.parse(r.stdout || 'null')) };
}

const deterministic = (r: EvalReport) =>
  r.tasks.map((t) => Object.fromEntries(DETERMINISTIC_TASK_FIELDS.map((f) => [f, t[f]])));

describe('gatehouse eval examples/eval/suite.json (real sandboxes, scripted models)', () => {
  it(
    'each task as expected, the same deterministic fields twice, the repositories untouched',
    { timeout: 300_000 },
    () => {
      const before = REPOS.map((r) => treeHash(path.join(root, r)));
      const state = scratch('gh-eval-state-');
      const first = evalJson(state);
      expect(first.status, first.stderr).toBe(1);
      const r = first.report;
      expect(r.tasks.map((t) => t.id)).toEqual(['fix-add', 'wrong-fix', 'asks']);
      expect(r.tasks[0]).toMatchObject({
        passed: true,
        reason: null,
        status: 'final',
        stopReason: 'final_answer',
        decidedBy: 'check',
        check: 'passed',
        // read_file, edit_file, and gatehouse's own run of the check
        turns: 3,
        toolCalls: 3,
        exitCode: 0,
        costUsd: null,
        error: null,
      });
      expect(r.tasks[1]).toMatchObject({
        passed: false,
        reason: 'check_failed',
        status: 'partial',
        stopReason: 'check_failed',
        decidedBy: 'check',
        check: 'failed',
        turns: 4,
        exitCode: 4,
      });
      // Nobody can answer an eval: the ask pauses the run (exit 3), and the task has not passed.
      expect(r.tasks[2]).toMatchObject({
        passed: false,
        reason: 'paused',
        status: 'paused',
        decidedBy: null,
        turns: 1,
        toolCalls: 1,
        exitCode: 3,
      });
      for (const t of r.tasks) {
        expect(t.inputTokens).toBeGreaterThan(0);
        expect(t.outputTokens).toBeGreaterThan(0);
        expect(t.wallMs).toBeGreaterThan(0);
        expect(t.runId).toMatch(/^run_/);
        // Each one a real run, its log intact.
        expect(verifyLog(path.join(state, 'runs', t.runId!, 'events.jsonl')).ok, t.id).toBe(true);
      }
      expect(r.totals).toMatchObject({ tasks: 3, passed: 1, failed: 2, costUsd: null, costUnknown: 3 });
      expect(r.totals.passRate).toBeCloseTo(1 / 3);
      expect(r.totals.turns).toBe(8);
      expect(r.medians.turns).toBe(3);
      // The paused run is waiting for a person, as any headless run would be.
      const pending = gatehouse(['approvals', r.tasks[2]!.runId!, '--state-dir', state, '--json']);
      expect(pending.status).toBe(0);
      expect(
        pending.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { tool: string }),
      ).toMatchObject([{ tool: 'bash' }]);
      // Progress on stderr, one line per task.
      expect(first.stderr.match(/^eval: \[\d\/3\] /gm)).toHaveLength(3);

      const second = evalJson(state);
      expect(second.status, second.stderr).toBe(1);
      expect(deterministic(second.report)).toEqual(deterministic(r));
      expect(second.report.tasks.map((t) => t.runId)).not.toEqual(r.tasks.map((t) => t.runId));
      expect(REPOS.map((d) => treeHash(path.join(root, d)))).toEqual(before);
    },
  );

  it('a suite that passes exits 0, and --out writes its Markdown', { timeout: 150_000 }, () => {
    const dir = scratch('gh-eval-one-');
    const one = path.join(dir, 'suite.json');
    const shipped = JSON.parse(readFileSync(suite, 'utf8')) as { tasks: Record<string, string>[] };
    const fix = shipped.tasks[0]!;
    const at = (rel: string) => path.join(root, 'examples/eval', rel);
    writeFileSync(
      one,
      JSON.stringify({
        tasks: [
          {
            ...fix,
            repository: at(fix.repository!),
            policy: at(fix.policy!),
            model: `scripted:${at(fix.model!.slice('scripted:'.length))}`,
          },
        ],
      }),
    );
    const out = path.join(dir, 'eval.md');
    const r = gatehouse(['eval', one, '--state-dir', path.join(dir, 'state'), '--out', out]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const md = readFileSync(out, 'utf8');
    expect(md).toMatch(/^## ✅ gatehouse eval: 1 of 1 passed \(100 %\)/);
    expect(md).toMatch(/^\| `fix-add` \| ✅ passed \| `final` \| `check` \| 3 \| 3 \| /m);
  });
});
