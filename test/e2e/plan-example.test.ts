import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The README's plan example as a person without a terminal runs it: the plan pauses at the gate
 * and the pause prints the plan and the commands that answer it; approved, it runs to 3/3.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-plan-example-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));
const gatehouse = (args: string[]) =>
  spawnSync(process.execPath, [cli, ...args, '--state-dir', stateDir], {
    cwd: root,
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, CI: 'true' },
    input: '',
  });

describe("the README's plan example", () => {
  it('pauses with the plan shown task by task and the plan commands; approved and resumed, 3/3 tasks', () => {
    const first = gatehouse([
      'plan',
      'fix the failing tests',
      '--repo',
      'examples/failing-test',
      '--policy',
      'examples/failing-test/.gatehouse/policy.json',
      '--model',
      'scripted:examples/scripts/plan-fix-failing-test.json',
    ]);
    expect(first.status, first.stderr).toBe(3);
    const [, runId, request] =
      /paused: waiting for approval[\s\S]*?gatehouse plan approve (run_\w+) --request (apr_\w+)/.exec(first.stdout) ??
      [];
    expect(runId, first.stdout).toBeDefined();
    expect(first.stdout).toMatch(/ 2\. t2 {2}Change add\(\) in src\/math\.js to return a \+ b\n\s+after: {2}t1\n/);
    expect(first.stdout).toMatch(
      /check: {2}node --test\n\s+tools: {2}read_file, edit_file\n\s+paths: {2}src\/math\.js/,
    );
    expect(first.stdout).toContain(`gatehouse plan reject ${runId} --request ${request} --reason`);
    expect(first.stdout).not.toMatch(/gatehouse approve run_/);

    const approved = gatehouse(['plan', 'approve', runId!, '--request', request!]);
    expect(approved.status, approved.stderr).toBe(0);
    const resumed = gatehouse(['resume', runId!]);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/\[Task 3\/3\] ✓ Run node --test to confirm the whole suite passes/);
    expect(resumed.stdout).toMatch(/answer: 3\/3 tasks completed\. 0 failures\./);
    expect(resumed.stdout).toMatch(/-\s+return a - b;\n\+\s+return a \+ b;/);
  });
});
