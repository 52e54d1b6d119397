import { randomBytes } from 'node:crypto';
import { promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import type { ApprovalPolicy } from '../policy/approval-policy';
import { blobPath, hashFile, type WorkspaceManifest } from '../sandbox/workspace-save';
import { GatehouseError } from '../errors';

/**
 * The run's changes as files, checked on the host before anything is written to the repository:
 * the sandbox is hostile, so nothing it produced (a diff, a list of paths, a link) is trusted.
 */
export interface FileWrite {
  path: string;
  /** The new content, saved beside the log under its hash. */
  blob: string;
  sha256: string;
  mode: 0o644 | 0o755;
}

export interface ChangeSet {
  writes: FileWrite[];
  deletes: string[];
  /** Listed as changed but identical to what the repository has (or already absent): nothing to do. */
  unchanged: string[];
  /** Each with the reason; one refusal means nothing is written. */
  refused: Array<{ path: string; reason: string }>;
  /** Not exported (too large, or not a file): listed with their sizes, never written. */
  skipped: Array<{ path: string; size: number; reason: string }>;
}

export interface VerifyOptions {
  /** The run's policy: its write_file / edit_file rules decide every path, deletions included. */
  policy: ApprovalPolicy;
  /** More repository-relative folders never written (the run's state directory when it is inside). */
  protect?: string[];
  /** A further judge of every path (a plan run's approved scope, plan/approved-scope.ts): its problem, or undefined. */
  scope?: (path: string) => string | undefined;
}

/** Checks every changed path of a saved workspace against the repository on the host and the policy. */
export async function verifyChangeSet(
  repoDir: string,
  runDir: string,
  manifest: WorkspaceManifest,
  opts: VerifyOptions,
): Promise<ChangeSet> {
  const root = await fs.realpath(repoDir);
  const set: ChangeSet = { writes: [], deletes: [], unchanged: [], refused: [], skipped: [...manifest.skipped] };
  const deleting = new Set(manifest.deleted);
  const refuse = (p: string, reason: string) => void set.refused.push({ path: p, reason });
  for (const p of manifest.deleted) {
    const why =
      pathProblem(p, opts.protect ?? []) ??
      opts.scope?.(p) ??
      policyProblem(p, opts.policy) ??
      (await hostProblem(root, p, deleting));
    if (why) {
      refuse(p, why);
      continue;
    }
    const st = await lstat(path.join(root, p));
    if (!st) set.unchanged.push(p);
    else if (st.isSymbolicLink()) refuse(p, 'the repository has a symbolic link here; deleting links is not applied');
    else if (!st.isFile()) refuse(p, `the repository has a ${kindOf(st)} here, not a file`);
    else set.deletes.push(p);
  }
  for (const f of manifest.files) {
    const why =
      pathProblem(f.path, opts.protect ?? []) ??
      opts.scope?.(f.path) ??
      policyProblem(f.path, opts.policy) ??
      (await hostProblem(root, f.path, deleting));
    if (why) {
      refuse(f.path, why);
      continue;
    }
    if (f.kind === 'symlink') {
      refuse(f.path, `the sandbox made it a symbolic link (to ${JSON.stringify(f.target)}); links are never applied`);
      continue;
    }
    if ((f.mode & 0o7000) !== 0) {
      refuse(
        f.path,
        `mode ${(f.mode & 0o7777).toString(8)} has setuid, setgid or sticky bits; only 0644 and 0755 are applied`,
      );
      continue;
    }
    const mode = (f.mode & 0o111) !== 0 ? 0o755 : 0o644;
    const target = path.join(root, f.path);
    const st = await lstat(target);
    if (st?.isSymbolicLink()) {
      refuse(f.path, 'the repository has a symbolic link here; it is never replaced or written through');
      continue;
    }
    if (st && !st.isFile()) {
      refuse(f.path, `the repository has a ${kindOf(st)} here, not a file`);
      continue;
    }
    const blob = blobPath(runDir, f.sha256);
    if (
      st &&
      st.size === f.size &&
      ((st.mode & 0o111) !== 0 ? 0o755 : 0o644) === mode &&
      (await hashFile(target)) === f.sha256
    ) {
      set.unchanged.push(f.path);
      continue;
    }
    set.writes.push({ path: f.path, blob, sha256: f.sha256, mode });
  }
  return set;
}

/** A path that is not a plain path inside the repository, or names what is never written back. */
export function pathProblem(p: string, protect: readonly string[]): string | undefined {
  const normal = path.posix.normalize(p);
  if (
    p === '' ||
    p.includes('\0') ||
    path.posix.isAbsolute(p) ||
    normal !== p ||
    p.endsWith('/') ||
    normal === '..' ||
    normal.startsWith('../')
  ) {
    return 'not a plain path inside the repository';
  }
  const parts = p.split('/');
  if (parts.some((s) => s.toLowerCase() === '.git'))
    return "under .git/: a repository's git directory is never written back";
  if (parts[0]!.toLowerCase() === '.gatehouse')
    return "under .gatehouse/: the repository's policy is never written back";
  for (const dir of protect) if (p === dir || p.startsWith(`${dir}/`)) return `under ${dir}/: gatehouse's own state`;
  return undefined;
}

/** The run's write rules, on the final path; a rule that asks needs a person, so it is not applied here. */
export function policyProblem(p: string, policy: ApprovalPolicy): string | undefined {
  for (const tool of ['write_file', 'edit_file']) {
    const d = policy.decide({ tool, input: { path: p }, readOnly: false, sideEffect: 'write' });
    if (d.decision === 'deny') return `denied by the policy (${d.policyId}): ${d.reason}`;
    if (d.decision === 'ask' && !d.policyId.startsWith('mode:'))
      return `the policy asks before writing it (${d.policyId}); review the diff and apply it by hand if it is wanted`;
  }
  return undefined;
}

/** Every folder on the way must be a real folder on the host (lstat, one component at a time). */
async function hostProblem(root: string, p: string, deleting: ReadonlySet<string>): Promise<string | undefined> {
  const parts = p.split('/');
  for (let i = 1; i < parts.length; i++) {
    const rel = parts.slice(0, i).join('/');
    const st = await lstat(path.join(root, rel));
    if (!st) return undefined;
    if (st.isSymbolicLink()) return `${rel} is a symbolic link in the repository; nothing is written through it`;
    if (!st.isDirectory() && !(st.isFile() && deleting.has(rel)))
      return `${rel} is a ${kindOf(st)} in the repository, not a folder`;
  }
  return undefined;
}

/** The change set was not (wholly) written to the repository; the message says which files were. */
export class ApplyError extends GatehouseError {
  readonly kind = 'refused';
}

/**
 * Writes a verified change set: deletions, then each file to a temporary name in its folder and
 * renamed over the old one (so a file is either old or new, never half written). A failure stops
 * at once and says which files were written and which were not.
 */
export async function applyChangeSet(repoDir: string, set: ChangeSet): Promise<void> {
  if (set.refused.length > 0) throw new ApplyError('refusing to apply a change set with refused files');
  const root = await fs.realpath(repoDir);
  const done: string[] = [];
  const all: Array<{ p: string; w?: FileWrite }> = [
    ...set.deletes.map((p) => ({ p })),
    ...set.writes.map((w) => ({ p: w.path, w })),
  ];
  for (const [i, step] of all.entries()) {
    try {
      const target = path.join(root, step.p);
      // Checked again just before writing: the host may have changed since verification.
      const problem = await hostProblem(root, step.p, new Set(set.deletes));
      if (problem) throw new Error(problem);
      if (step.w) await writeFileAtomic(root, step.w);
      else
        await fs
          .unlink(target)
          .catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)));
      done.push(step.p);
    } catch (e) {
      const rest = all.slice(i).map((s) => s.p);
      throw new ApplyError(
        `applying stopped at ${step.p}: ${(e as Error).message}. ` +
          `Written: ${done.length ? done.join(', ') : 'nothing'}; not written: ${rest.join(', ')}. ` +
          'The repository is partly changed: review it (git status) and the diff beside the log.',
      );
    }
  }
}

async function writeFileAtomic(root: string, w: FileWrite): Promise<void> {
  const target = path.join(root, w.path);
  await mkdirs(root, path.posix.dirname(w.path));
  const tmp = path.join(path.dirname(target), `.gatehouse-${randomBytes(6).toString('hex')}.tmp`);
  try {
    await fs.copyFile(w.blob, tmp);
    await fs.chmod(tmp, w.mode);
    const h = await fs.open(tmp, 'r');
    await h.sync().finally(() => h.close());
    const st = await lstat(target);
    if (st && !st.isFile()) throw new Error(`${w.path} became a ${kindOf(st)} on the host`);
    await fs.rename(tmp, target);
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw e;
  }
}

/** Creates missing folders one at a time, refusing to pass through anything but a real folder. */
async function mkdirs(root: string, rel: string): Promise<void> {
  if (rel === '.' || rel === '') return;
  let cur = root;
  for (const part of rel.split('/')) {
    cur = path.join(cur, part);
    const st = await lstat(cur);
    if (!st) await fs.mkdir(cur, { mode: 0o755 });
    else if (!st.isDirectory()) throw new Error(`${path.relative(root, cur)} is a ${kindOf(st)}, not a folder`);
  }
}

async function lstat(p: string): Promise<Stats | undefined> {
  return fs
    .lstat(p)
    .catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' || e.code === 'ENOTDIR' ? undefined : Promise.reject(e)));
}

function kindOf(st: Stats): string {
  if (st.isSymbolicLink()) return 'symbolic link';
  if (st.isDirectory()) return 'folder';
  if (st.isFile()) return 'file';
  return 'special file';
}
