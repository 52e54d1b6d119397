import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * `gatehouse run`'s project config flags through the real CLI bundle. Every case here fails (or
 * is reported) before a sandbox would start, so no Docker is needed.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const script = path.join(root, 'examples/scripts/fix-failing-test.json');

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function scratch(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'gh-config-cli-'));
  made.push(d);
  return d;
}
function write(file: string, content: unknown): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(
    process.execPath,
    [cli, 'run', 'task', '--model', `scripted:${script}`, '--state-dir', scratch(), ...args],
    { encoding: 'utf8', timeout: 60_000, env: { ...process.env, CI: 'true', ...env }, input: '' },
  );
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe('gatehouse run: config flags', () => {
  it('--setup-env naming an unset variable is a usage error naming it', () => {
    const r = run(['--repo', scratch(), '--setup-env', 'GH_TEST_UNSET_TOKEN']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--setup-env GH_TEST_UNSET_TOKEN: not set in gatehouse's environment/);
  });

  it('--config naming a missing file is a usage error naming the file', () => {
    const missing = path.join(scratch(), 'nope.json');
    const r = run(['--repo', scratch(), '--config', missing]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${missing}: cannot read the config file: no such file`);
  });

  it('an invalid config lists every problem at once (exit 2)', () => {
    const file = write(path.join(scratch(), 'c.json'), {
      imgae: 'x',
      limits: { memoryMb: '1g' },
      egress: { setup: ['http://a.b'] },
    });
    const r = run(['--repo', scratch(), '--config', file]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('the project config is not valid (3 problems)');
    expect(r.stderr).toContain(`${file}: imgae: unknown key; did you mean image?`);
    expect(r.stderr).toContain(`${file}: limits.memoryMb: expected a positive whole number, got "1g"`);
    expect(r.stderr).toContain(`${file}: egress.setup[0]: no scheme`);
  });

  it('a bad --image is a usage error', () => {
    const r = run(['--repo', scratch(), '--image', 'preset:cobol']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--image: there is no preset "cobol"/);
  });

  it('--policy with a --config that carries a policy is a usage error', () => {
    const dir = scratch();
    const config = write(path.join(dir, 'c.json'), { policy: { deny: ['bash(git push*)'] } });
    const policy = write(path.join(dir, 'p.json'), {});
    const r = run(['--repo', scratch(), '--config', config, '--policy', policy]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--policy .*p\.json and the --config file's "policy" both name the run's policy/);
  });

  it('a symlinked repository config is refused (exit 1)', () => {
    const repo = scratch();
    const target = write(path.join(scratch(), 'c.json'), {});
    mkdirSync(path.join(repo, '.gatehouse'));
    symlinkSync(target, path.join(repo, '.gatehouse', 'config.json'));
    const r = run(['--repo', repo]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/\.gatehouse\/config\.json is a symbolic link/);
  });

  it("says what the repository's config asked for and did not get, before anything starts", () => {
    const repo = scratch();
    write(path.join(repo, '.gatehouse', 'config.json'), {
      image: 'evil/image',
      egress: { setup: ['evil.example.com'] },
      limits: { memoryMb: 99999 },
    });
    // A broken --policy stops the run right after the config is read, so no sandbox is needed.
    const badPolicy = write(path.join(scratch(), 'p.json'), '{');
    const r = run(['--repo', repo, '--policy', badPolicy]);
    expect(r.stderr).toContain(
      "gatehouse: not taken from the repository's config (pass --config FILE to trust it): image evil/image, " +
        'egress.setup evil.example.com, limits.memoryMb 99999 (above 1024)',
    );
    expect(r.status).toBe(2);
  });

  it("a real run is held to the repository config's lower budget and records the config in run.started", () => {
    const repo = scratch();
    cpSync(path.join(root, 'examples/failing-test'), repo, { recursive: true });
    write(path.join(repo, '.gatehouse', 'config.json'), { budgets: { maxTurns: 2, maxToolCalls: 9999 } });
    const r = run(['--repo', repo, '--policy', path.join(repo, '.gatehouse/policy.json'), '--json']);
    const log = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
    expect(log[0]).toMatchObject({
      type: 'run.started',
      data: {
        budgets: { maxTurns: 2, maxToolCalls: 100 },
        config: {
          source: `${path.join(repo, '.gatehouse', 'config.json')} (from the repository: narrowing the defaults)`,
          sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
          ignored: ['budgets.maxToolCalls 9999 (above 100)'],
        },
      },
    });
    // The demo needs five turns: the config's two end it partial (exit 4).
    expect(log.at(-1)).toMatchObject({ type: 'run.completed', data: { status: 'partial', stopReason: 'max_turns' } });
    expect(r.status).toBe(4);
  });
});
