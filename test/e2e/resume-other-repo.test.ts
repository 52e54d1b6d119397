import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Runs out of the repository, through the real CLI, a real sandbox and the scripted model, with the
 * default state directory (under a HOME made for the test): the run is kept in the user's state
 * directory by repository, not in the repository; resume from another repository is refused with
 * the command that works, which then finishes the run.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const temps: string[] = [];
const temp = (prefix: string): string => {
  const d = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

type Event = { type: string; runId: string; data: Record<string, unknown> };

function gitRepo(name: string, policy?: unknown): string {
  const dir = temp(`gh-${name}-`);
  writeFileSync(path.join(dir, 'README.md'), `# ${name}\n`);
  if (policy) {
    mkdirSync(path.join(dir, '.gatehouse'));
    writeFileSync(path.join(dir, '.gatehouse/policy.json'), JSON.stringify(policy));
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { stdio: 'pipe' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'first');
  return dir;
}

describe('runs out of the repository; resume from another repository (real CLI, real sandbox)', () => {
  it('keeps the run under the state home by repository; refuses resume elsewhere; --repo resumes it', () => {
    const home = temp('gh-home-');
    const env = { ...process.env, HOME: home, XDG_STATE_HOME: '', GATEHOUSE_STATE_DIR: '', CI: 'true' };
    const a = gitRepo('repo-a', {
      mode: 'sandboxed-auto',
      ask: [{ rule: 'bash(echo ran*)', match: ['echo ran >> ran.log'] }],
    });
    const b = gitRepo('repo-b');
    const script = path.join(temp('gh-script-'), 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        turns: [
          { toolCalls: [{ name: 'bash', input: { command: 'echo ran >> ran.log' } }] },
          { final: 'Appended one line to ran.log, as obs-1 shows.' },
        ],
      }),
    );
    const gatehouse = (cwd: string, args: string[]) =>
      spawnSync(process.execPath, [cli, ...args], { cwd, env, encoding: 'utf8', timeout: 120_000, input: '' });

    const started = gatehouse(a, ['run', 'record', '--model', `scripted:${script}`, '--json']);
    expect(started.status, started.stderr).toBe(3); // paused at the ask
    const events = started.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Event);
    const runId = events[0]!.runId;
    expect(events[0]!.data).toMatchObject({ repo: a, tree: { kind: 'git', dirty: false } });

    // Not in the repository: under the state home, in the repository's group.
    expect(existsSync(path.join(a, '.gatehouse', 'runs'))).toBe(false);
    const groups = readdirSync(path.join(home, '.local/state/gatehouse/repos'));
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatch(/^gh-repo-a-.*-[0-9a-f]{12}$/);
    expect(existsSync(path.join(home, '.local/state/gatehouse/repos', groups[0]!, 'runs', runId))).toBe(true);
    expect(execFileSync('git', ['-C', a, 'status', '--porcelain'], { encoding: 'utf8' })).toBe('');

    // latest and a prefix work where a full id did.
    const listed = gatehouse(a, ['runs']);
    expect(listed.stdout).toContain(runId);
    const request = String(events.find((e) => e.type === 'approval.requested')!.data.requestId);
    expect(gatehouse(a, ['approve', 'latest', request]).status).toBe(0);

    const prefix = runId.slice(0, -4);
    const refused = gatehouse(b, ['resume', prefix, '--json']);
    expect(refused.stderr).toContain(
      `run ${runId} worked on ${a}; you are in ${b}; run \`gatehouse resume ${runId} --repo ${a}\``,
    );
    expect(refused.status).toBe(1);

    const resumed = gatehouse(b, ['resume', prefix, '--repo', a, '--json']);
    expect(resumed.status, `${resumed.stderr}\n${resumed.stdout.slice(-3000)}`).toBe(0);
    const tail = resumed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Event);
    expect(tail.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'final' } });
    expect(gatehouse(b, ['show', prefix]).stdout).toContain('run.completed');
  });
});
