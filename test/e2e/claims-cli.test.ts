import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const example = path.join(root, 'examples/failing-test');

function script(turns: unknown[]): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-script-')), 'script.json');
  writeFileSync(file, JSON.stringify({ turns }));
  return file;
}

/** The real CLI on a copy of the failing-test example, in a real sandbox, with a scripted model. */
function run(turns: unknown[]) {
  const repo = mkdtempSync(path.join(os.tmpdir(), 'gh-claims-'));
  cpSync(example, repo, { recursive: true });
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-runs-'));
  // Commands and edits run without asking: the run must reach its final answer.
  const policy = path.join(stateDir, 'policy.json');
  writeFileSync(policy, JSON.stringify({ mode: 'sandboxed-auto', deny: ['bash(git push*)'] }));
  const r = spawnSync(
    process.execPath,
    [
      cli,
      'run',
      'fix the failing tests',
      '--repo',
      repo,
      '--model',
      `scripted:${script(turns)}`,
      '--policy',
      policy,
      '--json',
      '--state-dir',
      stateDir,
    ],
    { encoding: 'utf8', timeout: 180_000, env: { ...process.env, CI: 'true' }, input: '' },
  );
  const events = r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
  return { r, events };
}

describe('claims checked against evidence (real CLI, real sandbox)', () => {
  it('a failing npm test claimed to pass is sent back once, then the run ends partial with exit code 4', () => {
    const { r, events } = run([
      { toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] },
      { final: 'I ran the tests. All tests pass (obs-1).' },
      { final: 'The tests pass (obs-1).' },
    ]);
    expect(r.status, r.stderr).toBe(4);
    const observation = events.find((e) => e.type === 'tool.observation')!.data;
    expect(observation).toMatchObject({ observationId: 'obs-1', tool: 'bash', outcome: 'failed' });
    expect(String(observation.content)).toMatch(/fail 1/);
    const feedback = events.filter((e) => e.type === 'run.feedback').map((e) => e.data);
    expect(feedback).toHaveLength(1);
    expect(feedback[0]).toMatchObject({
      kind: 'contract',
      claims: [
        { claim: 'I ran the tests.', cites: [], supported: true },
        { claim: 'All tests pass (obs-1).', cites: ['obs-1'], supported: false },
      ],
    });
    expect(String(feedback[0]!.reason)).toMatch(/obs-1, which shows a failure \(exit code 1\)/);
    expect(events.at(-1)).toMatchObject({
      type: 'run.completed',
      data: {
        status: 'partial',
        stopReason: 'unsupported_final',
        decidedBy: 'claims',
        answer: 'The tests pass (obs-1).',
      },
    });
  });

  it('the fix, with a passing npm test cited for it, ends final and says the answer decided', () => {
    const { r, events } = run([
      { toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] },
      { toolCalls: [{ name: 'read_file', input: { path: 'src/math.js' } }] },
      {
        toolCalls: [
          { name: 'edit_file', input: { path: 'src/math.js', oldText: 'return a - b;', newText: 'return a + b;' } },
        ],
      },
      { toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] },
      { final: 'Fixed add() in src/math.js (obs-3). The tests pass now (obs-4); they failed before (obs-1).' },
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(events.filter((e) => e.type === 'run.feedback')).toEqual([]);
    expect(events.at(-1)).toMatchObject({
      type: 'run.completed',
      data: { status: 'final', decidedBy: 'answer', filesChanged: ['src/math.js'] },
    });
  });
});
