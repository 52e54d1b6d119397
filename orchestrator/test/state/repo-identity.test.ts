import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { RunLog } from '../../src/events/store';
import { ensureGroup, realRepoPath } from '../../src/events/state-home';
import { repoTree, treeChange } from '../../src/run/repo-tree';
import { ResumeError } from '../../src/run/resume';
import { checkResumeRepo } from '../../src/run/resume-repo';
import { tempDir } from './fake-runs';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { stdio: 'pipe' });

function gitRepo(): string {
  const dir = realRepoPath(tempDir('gh-git-'));
  git(dir, 'init', '-q');
  writeFileSync(path.join(dir, 'a.txt'), 'one\n');
  writeFileSync(path.join(dir, '.gitignore'), 'ignored/\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'first');
  return dir;
}

describe("a repository's tree, as run.started records it", () => {
  it('a git repository: HEAD^{tree}, dirty, and a hash that tells uncommitted edits apart', () => {
    const dir = gitRepo();
    const head = git(dir, 'rev-parse', 'HEAD^{tree}').toString().trim();
    const clean = repoTree(dir);
    expect(clean).toEqual({ kind: 'git', tree: head, dirty: false });
    // Ignored files and the older layout's runs do not count.
    mkdirSync(path.join(dir, 'ignored'));
    writeFileSync(path.join(dir, 'ignored/x'), 'x');
    mkdirSync(path.join(dir, '.gatehouse/runs/run_a'), { recursive: true });
    writeFileSync(path.join(dir, '.gatehouse/runs/run_a/events.jsonl'), '{}\n');
    expect(repoTree(dir)).toEqual(clean);
    writeFileSync(path.join(dir, 'a.txt'), 'two\n');
    const dirty = repoTree(dir)!;
    expect(dirty).toMatchObject({
      kind: 'git',
      tree: head,
      dirty: true,
      changes: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
    });
    expect(treeChange(clean!, dirty)).toBe('it has uncommitted changes now');
    writeFileSync(path.join(dir, 'a.txt'), 'three\n');
    expect(treeChange(dirty, repoTree(dir))).toBe('its uncommitted changes are different');
    git(dir, 'commit', '-qam', 'second');
    expect(treeChange(clean!, repoTree(dir))).toMatch(/^its committed tree changed \([0-9a-f]{12} → [0-9a-f]{12}\)$/);
    expect(treeChange(clean!, clean)).toBeUndefined();
  });

  it('a folder that is not a git repository: a hash of its files', () => {
    const dir = tempDir('gh-files-');
    writeFileSync(path.join(dir, 'a.txt'), 'one\n');
    const before = repoTree(dir)!;
    expect(before).toMatchObject({ kind: 'files', files: 1 });
    expect(treeChange(before, repoTree(dir))).toBeUndefined();
    writeFileSync(path.join(dir, 'a.txt'), 'two\n');
    expect(treeChange(before, repoTree(dir))).toBe('its files changed (1 then, 1 now)');
    git(dir, 'init', '-q');
    expect(treeChange(before, repoTree(dir))).toBe('it has become a git repository');
  });
});

describe('resume holds a run to the repository it recorded', () => {
  const started = (repo: string, tree = repoTree(repo)) => ({
    task: 't',
    mode: 'auto',
    surface: [],
    repo,
    ...(tree ? { tree } : {}),
  });

  it('refuses another --repo, and another current directory with the default state directory', () => {
    const a = gitRepo();
    const b = gitRepo();
    const s = started(a);
    const how = `run \`gatehouse resume run_1 --repo ${a}\``;
    expect(() => checkResumeRepo('run_1', s, { repo: b, checkCwd: true })).toThrow(ResumeError);
    expect(() => checkResumeRepo('run_1', s, { repo: b, checkCwd: false })).toThrow(
      `run run_1 worked on ${a}; --repo names ${b}; ${how}`,
    );
    expect(() => checkResumeRepo('run_1', s, { cwd: b, checkCwd: true })).toThrow(
      `run run_1 worked on ${a}; you are in ${b}; ${how}`,
    );
    expect(checkResumeRepo('run_1', s, { repo: a, cwd: b, checkCwd: true })).toEqual({});
    mkdirSync(path.join(a, 'sub'));
    expect(checkResumeRepo('run_1', s, { cwd: path.join(a, 'sub'), checkCwd: true })).toEqual({});
    // A named state directory is addressed from anywhere (CI): only --repo is checked there.
    expect(checkResumeRepo('run_1', s, { cwd: b, checkCwd: false })).toEqual({});
    // A log of an older gatehouse recorded the path as given: nothing to check.
    expect(checkResumeRepo('run_1', started('.'), { cwd: b, checkCwd: true })).toEqual({});
  });

  it('warns (does not refuse) when the tree changed since the start', () => {
    const a = gitRepo();
    const s = started(a);
    writeFileSync(path.join(a, 'new.txt'), 'n\n');
    expect(checkResumeRepo('run_1', s, { cwd: a, checkCwd: true }).warning).toBe(
      `the repository ${a} changed since run run_1 started: it has uncommitted changes now. The run continues on ` +
        'it as it is now (the files the run changed are put back over it)',
    );
  });
});

describe('gatehouse resume from another repository (the real CLI, no sandbox: refused before one starts)', () => {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
  });

  it('names the repository the run worked on and the command that resumes it there', () => {
    const home = tempDir('gh-home-');
    const env = { ...process.env, HOME: home, XDG_STATE_HOME: '', GATEHOUSE_STATE_DIR: '', CI: 'true' };
    const a = gitRepo();
    const b = gitRepo();
    const group = ensureGroup(path.join(home, '.local/state/gatehouse'), a);
    const log = RunLog.create(group, 'run_movedaway1');
    log.append('run.started', 'user', {
      task: 't',
      mode: 'auto',
      surface: [],
      repo: a,
      model: 'scripted:/nonexistent.json',
      lineage: ['run_movedaway1'],
      tree: repoTree(a)!,
    });
    log.close();
    const resume = (cwd: string, ...args: string[]) =>
      spawnSync(process.execPath, [cli, 'resume', ...args], { cwd, env, encoding: 'utf8', timeout: 30_000 });
    const r = resume(b, 'run_moved');
    expect(r.stderr).toContain(
      `run run_movedaway1 worked on ${a}; you are in ${b}; run \`gatehouse resume run_movedaway1 --repo ${a}\``,
    );
    expect(r.status).toBe(1);
    const other = resume(a, 'run_moved', '--repo', b);
    expect(other.stderr).toContain(`--repo names ${b}`);
    expect(other.status).toBe(1);
    // From the run's own repository "latest" finds it, and the check passes (the missing script stops it next).
    const here = resume(a, 'latest');
    expect(here.stderr).not.toContain('worked on');
    expect(here.stderr).toMatch(/nonexistent\.json/);
  });
});
