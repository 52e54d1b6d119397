import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canonicalJson, SAFE_GIT, SAFE_GIT_ENV, type EventDataOf } from '@gatehouse/shared';
import { repoTree } from '../run/repo-tree';
import { ReplayError } from './replay-error';

/**
 * Where a fresh sandbox for an execution replay is copied from, so it starts as the recorded run's did:
 * - `repository`: the repository holds exactly what it held when the run started (its recorded
 *   `run.started.tree` is what it is now): it is copied in as the run copied it;
 * - `tree`: the repository moved on, but the run started from a clean git tree that is still among
 *   its objects: that tree is exported (`git archive`, read-only) into a folder of its own, made a
 *   git repository with one commit there, and copied in from there.
 * Anything else cannot be rebuilt honestly and is refused, saying why.
 */
export type BasePlan = { kind: 'repository'; repoDir: string } | { kind: 'tree'; repoDir: string; tree: string };

export function planBase(runId: string, started: EventDataOf<'run.started'>): BasePlan {
  const repoDir = started.repo;
  if (!repoDir) throw refused(runId, 'it records no repository');
  const recorded = started.tree;
  if (!recorded) throw refused(runId, 'it does not record what its repository held at the start (run.started.tree)');
  if (!existsSync(repoDir)) throw refused(runId, `its repository ${repoDir} no longer exists`);
  const now = repoTree(repoDir);
  if (now && canonicalJson(now) === canonicalJson(recorded)) return { kind: 'repository', repoDir };
  if (recorded.kind === 'files') {
    throw refused(runId, `${repoDir} is not a git repository, and its files changed since the run started`);
  }
  if (recorded.dirty) {
    throw refused(
      runId,
      `the run started from uncommitted changes in ${repoDir}, which git does not keep and which changed since`,
    );
  }
  if (!hasTree(repoDir, recorded.tree)) {
    throw refused(runId, `tree ${recorded.tree} it started from is no longer in ${repoDir} (pruned?)`);
  }
  return { kind: 'tree', repoDir, tree: recorded.tree };
}

/** The folder to copy into the sandbox, and how to remove what was made for it (never the repository). */
export async function materializeBase(plan: BasePlan): Promise<{ dir: string; cleanup: () => void }> {
  if (plan.kind === 'repository') return { dir: plan.repoDir, cleanup: () => undefined };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-replay-base-'));
  try {
    await exportTree(plan.repoDir, plan.tree, dir);
    // A repository of its own with the tree as its one commit: git_status and git_diff see a clean tree.
    const local = (args: string[]) => git(dir, args);
    local(['init', '-q']);
    local(['add', '-A', '-f']);
    local([
      '-c',
      'user.name=gatehouse replay',
      '-c',
      'user.email=replay@gatehouse.invalid',
      'commit',
      '-q',
      '--allow-empty',
      '--no-verify',
      '-m',
      `the tree ${plan.tree} a recorded run started from`,
    ]);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function refused(runId: string, why: string): ReplayError {
  return new ReplayError(
    'refused',
    `run ${runId} cannot be re-executed on its recorded base: ${why}. An execution replay needs the repository as ` +
      'it was at the start, or the clean git tree it started from; the trace and dry-run modes need neither',
  );
}

function git(dir: string, args: string[]): string {
  // The repository's own config cannot make this run programs (hooks, fsmonitor, pager).
  return execFileSync('git', [...SAFE_GIT, '-C', dir, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...SAFE_GIT_ENV, PATH: process.env.PATH ?? SAFE_GIT_ENV.PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function hasTree(repoDir: string, tree: string): boolean {
  if (!/^[0-9a-f]{40,64}$/.test(tree)) return false;
  try {
    return git(repoDir, ['cat-file', '-t', tree]).trim() === 'tree';
  } catch {
    return false;
  }
}

/** `git archive TREE | tar -x`: reads the repository's objects, writes only into `dir`. */
function exportTree(repoDir: string, tree: string, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...SAFE_GIT_ENV, PATH: process.env.PATH ?? SAFE_GIT_ENV.PATH };
    const archive = spawn('git', [...SAFE_GIT, '-C', repoDir, 'archive', '--format=tar', tree], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const untar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
    archive.stdout.pipe(untar.stdin);
    let errors = '';
    archive.stderr.on('data', (c: Buffer) => (errors += c.toString()));
    untar.stderr.on('data', (c: Buffer) => (errors += c.toString()));
    let pending = 2;
    let failed = false;
    const done = (who: string) => (code: number | null) => {
      if (code !== 0 && !failed) {
        failed = true;
        reject(new Error(`exporting tree ${tree} from ${repoDir} failed (${who} exited ${code}): ${errors.trim()}`));
      }
      if (--pending === 0 && !failed) resolve();
    };
    archive.on('error', reject);
    untar.on('error', reject);
    archive.on('close', done('git archive'));
    untar.on('close', done('tar'));
  });
}
