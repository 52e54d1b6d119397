import { createHash } from 'node:crypto';
import { promises as fs, type Dirent } from 'node:fs';
import path from 'node:path';
import { PlainFileError, readPlainFile } from '../files/read-plain-file';

/**
 * Files that pin a project's dependencies: when one changes, what setup installs may change, so the
 * setup cache must miss. Manifests are included too (package.json, pyproject.toml...): without a
 * lockfile they are what decides the install.
 */
export const LOCKFILE_NAMES: ReadonlySet<string> = new Set([
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lockb',
  'bun.lock',
  'requirements.txt',
  'requirements-dev.txt',
  'constraints.txt',
  'pyproject.toml',
  'poetry.lock',
  'Pipfile',
  'Pipfile.lock',
  'uv.lock',
  'setup.py',
  'setup.cfg',
  'go.mod',
  'go.sum',
  'Cargo.toml',
  'Cargo.lock',
  'Gemfile',
  'Gemfile.lock',
  'composer.json',
  'composer.lock',
  '.npmrc',
  '.yarnrc.yml',
  '.python-version',
  '.nvmrc',
]);

/** Never searched: installed dependencies, build output and version control hold none of the project's lockfiles. */
const SKIPPED_DIRS = new Set([
  '.git',
  'node_modules',
  '.venv',
  'venv',
  '__pycache__',
  'target',
  'dist',
  'build',
  '.gatehouse',
]);
/** Bounds on the walk, so a huge or hostile tree cannot stall the run's start. */
const MAX_DEPTH = 6;
const MAX_ENTRIES = 200_000;
/** Far past any real lockfile (the largest package-lock.json seen are tens of MiB). */
const MAX_LOCKFILE_BYTES = 256 * 1024 * 1024;

/**
 * The SHA-256 of every lockfile in the repository (relative path → hex), walked without following
 * symlinks. A symlinked lockfile is hashed by its target text, which is what changes when it is
 * repointed. One that is not a regular file (a FIFO would block the read forever) or is too large
 * is not read: what it is stands in for its content.
 */
export async function lockfileHashes(repoDir: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  let seen = 0;
  const walk = async (rel: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(path.join(repoDir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (++seen > MAX_ENTRIES) return;
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (depth < MAX_DEPTH && !SKIPPED_DIRS.has(e.name)) await walk(child, depth + 1);
      } else if (LOCKFILE_NAMES.has(e.name)) {
        const full = path.join(repoDir, child);
        const content = e.isSymbolicLink() ? `symlink:${await fs.readlink(full)}` : lockfileContent(full);
        found[child] = createHash('sha256').update(content).digest('hex');
      }
    }
  };
  await walk('', 0);
  return found;
}

function lockfileContent(file: string): Buffer | string {
  try {
    return readPlainFile(file, MAX_LOCKFILE_BYTES);
  } catch (e) {
    if (e instanceof PlainFileError) return `not read:${e.why}`;
    throw e;
  }
}
