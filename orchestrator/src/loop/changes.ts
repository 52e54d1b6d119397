import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Sandbox } from '../sandbox/index';

const run = promisify(execFile);

/** Never applied back to the repository (git apply's `*` also matches `/`): the policy's folder, and that name as a link. */
export const PROTECTED = ['.gatehouse', '.gatehouse/*'];

/**
 * The sandbox's changes as a git diff saved beside the log; written back to the repository only
 * when asked, and only for a run that ended with an accepted final answer.
 */
export async function exportChanges(sandbox: Sandbox, runDir: string, repoDir: string, apply: boolean): Promise<{ filesChanged: string[]; diffFile?: string; applied: boolean }> {
  const changes = await sandbox.changes();
  const filesChanged = changes.files.map((f) => f.path);
  if (filesChanged.length === 0) return { filesChanged, applied: false };
  const diffFile = path.join(runDir, 'changes.diff');
  if (changes.truncated) {
    // Too big for a message: copy the files out instead, beside the log.
    await sandbox.exportFiles(changes.files.filter((f) => f.status !== 'deleted').map((f) => f.path), path.join(runDir, 'changed-files'));
    return { filesChanged, applied: false };
  }
  await fs.writeFile(diffFile, changes.diff);
  if (!apply) return { filesChanged, diffFile, applied: false };
  // A symlink written back could point the repository's policy (or anything) elsewhere.
  if (/^new file mode 120000$|^new mode 120000$/m.test(changes.diff)) {
    throw new Error(`not applied: the changes add a symbolic link; review ${diffFile} and apply it by hand if it is wanted`);
  }
  // The ceiling keeps git from finding an enclosing repository, so paths are relative to repoDir
  // whether or not it is a repository of its own. `.gatehouse/` (the repository's policy) is never
  // written back: an agent must not be able to widen its own policy for the next run.
  await run('git', ['apply', '--binary', '--whitespace=nowarn', ...PROTECTED.map((p) => `--exclude=${p}`), diffFile], { cwd: repoDir, env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(repoDir) } });
  return { filesChanged, diffFile, applied: true };
}
