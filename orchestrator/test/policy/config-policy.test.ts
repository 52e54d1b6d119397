import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PolicyFileError, resolveRunPolicy } from '../../src/policy/index';
import { repoWith, trustedFile } from '../config/helpers';

/** A repository whose .gatehouse/policy.json holds `policy`. */
function repoWithPolicy(policy: unknown): string {
  const repo = repoWith();
  mkdirSync(path.join(repo, '.gatehouse'));
  writeFileSync(path.join(repo, '.gatehouse', 'policy.json'), JSON.stringify(policy));
  return repo;
}

const bash = (command: string) => ({
  tool: 'bash',
  input: { command },
  readOnly: false,
  sideEffect: 'execute' as const,
});

describe("a project config's policy", () => {
  it('a trusted inline policy is used whole: allow rules, approvers and mode', async () => {
    const run = await resolveRunPolicy({
      repoDir: repoWith(),
      trustedPolicy: { inline: { mode: 'sandboxed-auto', allow: ['bash(curl *)'] }, source: '/t.json (policy)' },
    });
    expect(run.loaded.source).toBe('/t.json (policy)');
    expect(run.policy.mode).toBe('sandboxed-auto');
    expect(run.policy.decide(bash('curl http://x')).decision).toBe('allow');
    expect(run.ignored).toEqual([]);
  });

  it("--policy and the --config file's policy together are a usage error", async () => {
    const err = await resolveRunPolicy({
      repoDir: repoWith(),
      policyFile: trustedFile({}),
      trustedPolicy: { inline: {}, source: 'x' },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PolicyFileError);
    expect((err as Error).message).toMatch(/both name the run's policy; give one of them/);
  });

  it("the repository config's policy gives only deny and ask rules and a stricter mode", async () => {
    const run = await resolveRunPolicy({
      repoDir: repoWith(),
      repoPolicy: {
        inline: { mode: 'sandboxed-auto', allow: ['bash(curl *)'], deny: ['bash(git push*)'], ask: ['bash(npm *)'] },
        source: '/repo/.gatehouse/config.json (policy)',
      },
    });
    expect(run.ignored).toEqual(['config policy: 1 allow rule(s)', 'config policy: mode sandboxed-auto']);
    expect(run.policy.mode).toBe('confirm-novel');
    expect(run.loaded.source).toBe(
      '/repo/.gatehouse/config.json (policy) (from the repository: deny and ask rules only)',
    );
    expect(run.policy.decide(bash('git push origin main')).decision).toBe('deny');
    expect(run.policy.decide(bash('curl http://x')).decision).not.toBe('allow');
  });

  it('joins the repository policy file and the config policy: both rule sets, the stricter mode', async () => {
    const repo = repoWithPolicy({ mode: 'confirm-each', deny: ['bash(rm *)'], allow: ['bash(ls*)'] });
    const run = await resolveRunPolicy({
      repoDir: repo,
      repoPolicy: { inline: { mode: 'read-only', deny: ['bash(git push*)'] }, source: 'cfg (policy)' },
    });
    expect(run.policy.mode).toBe('read-only');
    expect(run.loaded.file.deny).toEqual(['bash(rm *)', 'bash(git push*)']);
    expect(run.loaded.file.allow).toEqual([]);
    expect(run.ignored).toEqual(['1 allow rule(s)']);
    expect(run.loaded.source).toBe(
      `${path.join(repo, '.gatehouse', 'policy.json')} + cfg (policy) (from the repository: deny and ask rules only)`,
    );
  });

  it('with a trusted policy the repository config’s policy is not taken, and that is listed', async () => {
    const run = await resolveRunPolicy({
      repoDir: repoWith(),
      policyFile: trustedFile({ allow: ['bash(npm test*)'] }),
      repoPolicy: { inline: { deny: ['bash(npm test*)'] }, source: 'cfg' },
    });
    expect(run.policy.decide(bash('npm test')).decision).toBe('allow');
    expect(run.ignored).toEqual(["the repository config's policy (a trusted policy was given)"]);
  });

  it('the repository policy file alone is restricted exactly as before (same source, same ignored)', async () => {
    const repo = repoWithPolicy({ allow: ['bash(ls*)'], mode: 'sandboxed-auto' });
    const run = await resolveRunPolicy({ repoDir: repo });
    expect(run.ignored).toEqual(['1 allow rule(s)', 'mode sandboxed-auto']);
    expect(run.loaded.source).toBe(
      `${path.join(repo, '.gatehouse', 'policy.json')} (from the repository: deny and ask rules only)`,
    );
  });
});
