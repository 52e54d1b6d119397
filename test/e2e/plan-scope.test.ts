import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, cleanScratch, done, gatehouse, of, plan } from '../support/plan-cli';

/**
 * A task's `paths` hold commands too: a command's paths are unknown before it runs, so the daemon's
 * list of what it changed decides after (the task fails as a permission deviation and a person is
 * asked), and the export never writes back a path outside the approved plan's paths.
 */
afterEach(cleanScratch);

describe('plan mode: commands are held to their task paths (real sandbox, scripted model)', () => {
  it("a command writing outside its task's paths fails the task and asks a person; the file is never applied", () => {
    const tasks = [
      { id: 't1', title: 'Change add() in src/math.js to return a + b', tools: ['bash'], paths: ['src/math.js'] },
      {
        id: 't2',
        title: 'Read src/math.js to confirm add() adds',
        dependsOn: ['t1'],
        tools: ['read_file'],
        paths: ['src/*'],
      },
      // Every task names its paths, so the plan's scope is bounded: src/math.js.
      { id: 't3', title: 'Run node --test to confirm the fix', dependsOn: ['t2'], tools: ['bash'], paths: ['src/*'] },
    ];
    const turns = [
      call('submit_plan', { tasks }),
      // Inside the task's tools, but the command also writes NOTES.txt, which no task's paths name.
      call('bash', { command: "sed -i 's/a - b/a + b/' src/math.js && echo owned > NOTES.txt" }),
      // After the person's retry:
      done('t1', 'add() in src/math.js now adds (obs-2).'),
      call('read_file', { path: 'src/math.js' }),
      done('t2', 'add() returns a + b (obs-4).'),
      call('bash', { command: 'node --test' }),
      done('t3', 'The tests pass (obs-6).'),
    ];
    const first = plan({
      turns,
      policy: { mode: 'sandboxed-auto', allow: ['submit_plan'] },
      extra: ['--apply'],
    });
    const { dir, stateDir, runId } = first;
    // The command ran (its changes are in the sandbox), then the task failed as a deviation: permission, a person asks.
    expect(first.status, first.stderr).toBe(3);
    const classified = of(first.events, 'failure.classified');
    expect(classified).toMatchObject([{ taskId: 't1', class: 'permission' }]);
    expect(String(classified[0]!.evidence)).toMatch(/NOTES\.txt, outside task t1's approved paths \(src\/math\.js\)/);
    const escalated = of(first.events, 'recovery.escalated');
    expect(escalated).toMatchObject([{ taskId: 't1', status: 'requested' }]);
    const requestId = String(escalated[0]!.requestId);

    expect(gatehouse(['plan', 'decide', runId, requestId, 'retry', '--state-dir', stateDir]).status).toBe(0);
    const resumed = gatehouse(['resume', runId, '--state-dir', stateDir, '--repo', dir, '--json', '--apply']);
    expect(resumed.status, resumed.stderr).toBe(0);
    const [completed] = of(resumed.events, 'run.completed');
    expect(completed).toMatchObject({ status: 'final', applied: false });
    // One refusal and nothing is written: the in-scope change stays for review in the diff.
    const refused = completed!.refused as Array<{ path: string; reason: string }>;
    expect(refused.map((r) => r.path)).toEqual(['NOTES.txt']);
    expect(refused[0]!.reason).toMatch(/outside the approved plan's paths \(src\/math\.js, src\/\*\)/);
    expect(existsSync(path.join(dir, 'NOTES.txt'))).toBe(false);
    expect(readFileSync(path.join(dir, 'src/math.js'), 'utf8')).toMatch(/a - b/);
    expect(readFileSync(path.join(stateDir, 'runs', runId, String(completed!.diffFile)), 'utf8')).toMatch(
      /\+\s*return a \+ b;/,
    );
  });
});
