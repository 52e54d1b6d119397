import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { verifyLog } from '@gatehouse/orchestrator';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const example = path.join(root, 'examples/failing-test');
const demoScript = path.join(root, 'examples/scripts/fix-failing-test.json');

function freshCopy(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-demo-'));
  cpSync(example, dir, { recursive: true });
  return dir;
}
function script(turns: unknown[]): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-script-')), 'script.json');
  writeFileSync(file, JSON.stringify({ turns }));
  return file;
}
/** The example's policy, given explicitly (a repository's own file is trusted for deny and ask rules only). */
const examplePolicy = ['--policy', path.join(example, '.gatehouse/policy.json')];
function gatehouse(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-runs-'));
  const withPolicy = args[0] === 'run' && !args.includes('--policy') ? [...args, ...examplePolicy] : args;
  const r = spawnSync(process.execPath, [cli, ...withPolicy, '--state-dir', stateDir], {
    encoding: 'utf8',
    timeout: 120_000,
    env,
  });
  return { ...r, stateDir };
}
const events = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown>; runId: string });

describe('gatehouse run (the real CLI, a real sandbox, the scripted model)', () => {
  it(
    'the demo: reads the failure, fixes the code, re-runs the tests, answers citing the passing run; the repository ' +
      'is untouched',
    () => {
      const repo = freshCopy();
      const before = readFileSync(path.join(repo, 'src/math.js'), 'utf8');
      const r = gatehouse([
        'run',
        'fix the failing tests',
        '--repo',
        repo,
        '--model',
        `scripted:${demoScript}`,
        '--json',
      ]);
      expect(r.status).toBe(0);
      const log = events(r.stdout);
      // --json: every stdout line is an event of the log, the last one run.completed.
      expect(log.at(-1)).toMatchObject({
        type: 'run.completed',
        data: { status: 'final', stopReason: 'final_answer', filesChanged: ['src/math.js'], applied: false },
      });
      const observations = log.filter((e) => e.type === 'tool.observation').map((e) => e.data);
      expect(observations[0]).toMatchObject({ observationId: 'obs-1', tool: 'bash', outcome: 'failed' });
      expect(String(observations[0]!.content)).toMatch(/fail 1/);
      expect(observations[3]).toMatchObject({ observationId: 'obs-4', tool: 'bash', outcome: 'ok' });
      expect(String(observations[3]!.content)).toMatch(/pass 2/);
      expect(readFileSync(path.join(repo, 'src/math.js'), 'utf8')).toBe(before);
      const runDir = path.join(r.stateDir, 'runs', log[0]!.runId);
      expect(readFileSync(path.join(runDir, 'changes.diff'), 'utf8')).toContain('+  return a + b;');
      expect(verifyLog(path.join(runDir, 'events.jsonl')).ok).toBe(true);
    },
  );

  it("--apply writes the fix back, and the repository's own tests then pass on the host", () => {
    const repo = freshCopy();
    const r = gatehouse([
      'run',
      'fix the failing tests',
      '--repo',
      repo,
      '--model',
      `scripted:${demoScript}`,
      '--apply',
    ]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`applied to ${repo}`);
    expect(readFileSync(path.join(repo, 'src/math.js'), 'utf8')).toContain('return a + b;');
    expect(spawnSync(process.execPath, ['--test'], { cwd: repo, encoding: 'utf8' }).status).toBe(0);
  });

  it('script_exhausted: a script that runs out of turns ends failed (exit 1)', () => {
    const r = gatehouse([
      'run',
      'x',
      '--repo',
      freshCopy(),
      '--model',
      `scripted:${script([{ toolCalls: [{ name: 'list_files', input: {} }] }])}`,
      '--json',
    ]);
    expect(r.status).toBe(1);
    expect(events(r.stdout).at(-1)).toMatchObject({
      type: 'run.completed',
      data: { status: 'failed', stopReason: 'script_exhausted' },
    });
  });

  it('max turns: the run ends partial (exit 4)', () => {
    const turns = Array.from({ length: 5 }, () => ({ toolCalls: [{ name: 'list_files', input: {} }] }));
    const r = gatehouse([
      'run',
      'x',
      '--repo',
      freshCopy(),
      '--model',
      `scripted:${script(turns)}`,
      '--max-turns',
      '2',
      '--json',
    ]);
    expect(r.status).toBe(4);
    expect(events(r.stdout).at(-1)).toMatchObject({ data: { status: 'partial', stopReason: 'max_turns' } });
  });

  it('max tool calls: partial (exit 4)', () => {
    const r = gatehouse([
      'run',
      'x',
      '--repo',
      freshCopy(),
      '--model',
      `scripted:${script([
        {
          toolCalls: [
            { name: 'list_files', input: {} },
            { name: 'list_files', input: {} },
            { name: 'list_files', input: {} },
          ],
        },
      ])}`,
      '--max-tool-calls',
      '2',
      '--json',
    ]);
    expect(r.status).toBe(4);
    expect(events(r.stdout).at(-1)).toMatchObject({ data: { status: 'partial', stopReason: 'max_tool_calls' } });
  });

  it('the same failing call three times: partial, repeated_failure', () => {
    const fail = { toolCalls: [{ name: 'bash', input: { command: 'exit 1' } }] };
    const r = gatehouse([
      'run',
      'x',
      '--repo',
      freshCopy(),
      '--model',
      `scripted:${script([fail, fail, fail, fail])}`,
      '--json',
    ]);
    expect(r.status).toBe(4);
    expect(events(r.stdout).at(-1)).toMatchObject({ data: { status: 'partial', stopReason: 'repeated_failure' } });
  });

  it('an unsupported final answer is sent back once with the reason, then the run ends partial', () => {
    const r = gatehouse([
      'run',
      'x',
      '--repo',
      freshCopy(),
      '--model',
      `scripted:${script([{ final: 'I fixed it and the tests pass.' }, { final: 'Really, the tests pass.' }])}`,
      '--json',
    ]);
    expect(r.status).toBe(4);
    const log = events(r.stdout);
    expect(log.find((e) => e.type === 'run.feedback')?.data.reason).toMatch(/cites no observation/);
    expect(log.at(-1)).toMatchObject({ data: { status: 'partial', stopReason: 'unsupported_final' } });
  });

  it('a final answer citing an observation that shows a failure is not accepted', () => {
    const r = gatehouse([
      'run',
      'x',
      '--repo',
      freshCopy(),
      '--model',
      'scripted:' +
        script([
          { toolCalls: [{ name: 'bash', input: { command: 'node --test' } }] },
          { final: 'The tests pass (obs-1).' },
          { final: 'They pass (obs-1).' },
        ]),
      '--json',
    ]);
    expect(r.status).toBe(4);
    expect(events(r.stdout).find((e) => e.type === 'run.feedback')?.data.reason).toMatch(/shows a failure/);
  });

  it('malformed tool-call input becomes a validation observation, not a crash', () => {
    const r = gatehouse([
      'run',
      'x',
      '--repo',
      freshCopy(),
      '--model',
      `scripted:${script([
        {
          toolCalls: [
            { name: 'read_file', input: { file: 'x' } },
            { name: 'no_such_tool', input: {} },
          ],
        },
        { final: 'Nothing to report.' },
      ])}`,
      '--json',
    ]);
    expect(r.status).toBe(0);
    const obs = events(r.stdout)
      .filter((e) => e.type === 'tool.observation')
      .map((e) => e.data.outcome);
    expect(obs).toEqual(['rejected', 'rejected']);
  });

  it.each([
    [['--model', 'gpt-4'], /openai:MODEL/],
    [['--model', 'openai:gpt-4.1'], /OPENAI_API_KEY/],
    [['--model', 'anthropic:claude-sonnet-4'], /ANTHROPIC_API_KEY/],
    [['--model', 'scripted:/nonexistent/script.json'], /script/i],
  ])('a bad model setup is a usage error (exit 2) saying what to do: %j', (args, message) => {
    const env = { ...process.env };
    delete env.OPENAI_API_KEY;
    delete env.ANTHROPIC_API_KEY;
    const r = gatehouse(['run', 'x', '--repo', freshCopy(), ...args], env);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('Ctrl-C: the run ends cancelled (exit 130), the log is kept, and no container is left', async () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-runs-'));
    const slow = script([{ toolCalls: [{ name: 'bash', input: { command: 'sleep 60' } }] }, { final: 'done' }]);
    const child = spawn(
      process.execPath,
      [cli, 'run', 'x', '--repo', freshCopy(), '--model', `scripted:${slow}`, '--json', '--state-dir', stateDir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let sent = false;
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (!sent && out.includes('"tool.execution.started"')) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(130);
    const log = events(out);
    expect(log.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'cancelled' } });
    const runId = log[0]!.runId;
    const left = spawnSync('docker', ['ps', '-a', '--filter', `label=gatehouse.run=${runId}`, '-q'], {
      encoding: 'utf8',
    }).stdout.trim();
    expect(left).toBe('');
    expect(verifyLog(path.join(stateDir, 'runs', runId, 'events.jsonl')).ok).toBe(true);
  });

  it('earlier runs kept inside the repository are not copied into the sandbox', () => {
    const repo = freshCopy();
    const stateDir = path.join(repo, '.gatehouse');
    const look = script([{ toolCalls: [{ name: 'bash', input: { command: 'ls -a' } }] }, { final: 'Listed.' }]);
    for (let i = 0; i < 2; i++) {
      const r = spawnSync(
        process.execPath,
        [cli, 'run', 'x', '--repo', repo, '--model', `scripted:${look}`, '--json', '--state-dir', stateDir],
        { encoding: 'utf8', timeout: 120_000 },
      );
      expect(r.status).toBe(0);
      const listing = String(events(r.stdout).find((e) => e.type === 'tool.observation')!.data.content);
      expect(listing).toContain('package.json');
      expect(listing).not.toContain('.gatehouse');
    }
  });

  it('runs and show read the log back', () => {
    const r = gatehouse(['run', 'fix', '--repo', freshCopy(), '--model', `scripted:${demoScript}`, '--json']);
    const runId = events(r.stdout)[0]!.runId;
    const list = spawnSync(process.execPath, [cli, 'runs', '--state-dir', r.stateDir], { encoding: 'utf8' });
    expect(list.stdout).toContain(runId);
    const show = spawnSync(process.execPath, [cli, 'show', runId, '--state-dir', r.stateDir], { encoding: 'utf8' });
    expect(show.status).toBe(0);
    // Who or what allowed each action, by which rule: the example repository's own policy.
    expect(show.stdout).toMatch(/tool\.approval\s+allow by allow\[0\] bash\(node --test\*\)/);
    expect(show.stdout).toMatch(
      /tool\.execution\.started\s+edit_file .* — allowed by allow\[1\] edit_file\(src\/\*\*\)/,
    );
    expect(show.stdout).toMatch(/run\.completed\s+final \(final_answer, decided by answer\)/);
  });
});
