import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import { z } from 'zod';
import type { Sandbox } from './sandbox';
import { linkedParent, readEntry, statPath, workspacePath, writeEntries, type RestoreItem } from './workspace-io';
import { changeTimes, scanWorkspace } from './workspace-scan';
import { GatehouseError } from '../errors';

/**
 * A run's workspace saved beside its log: every path that differs from the repository as copied
 * in — files by content hash (the bytes are in a content-addressed `blobs/` folder, so a file that
 * did not change is never stored twice), links by target, and deletions.
 */
const Saved = z.discriminatedUnion('kind', [
  z.strictObject({
    path: z.string(),
    kind: z.literal('file'),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    size: z.number().int().nonnegative(),
    mode: z.number().int(),
    uid: z.number().int(),
    stat: z.string().optional(),
  }),
  z.strictObject({
    path: z.string(),
    kind: z.literal('symlink'),
    target: z.string(),
    uid: z.number().int(),
    stat: z.string().optional(),
  }),
]);
export type SavedEntry = z.infer<typeof Saved>;

export const WorkspaceManifest = z.strictObject({
  v: z.literal(1),
  files: z.array(Saved),
  deleted: z.array(z.string()),
  /** Paths whose content is not saved: over the size limit, or not a file or link (a fifo, a device). */
  skipped: z.array(z.strictObject({ path: z.string(), size: z.number().int().nonnegative(), reason: z.string() })),
});
export type WorkspaceManifest = z.infer<typeof WorkspaceManifest>;

export const WORKSPACE_STATE_DIR = 'workspace';
export const BLOBS_DIR = `${WORKSPACE_STATE_DIR}/blobs`;

/** Default largest file saved or exported: beyond any workspace a sandbox is given. */
export const DEFAULT_MAX_FILE_BYTES = 8 * 1024 ** 3;

export interface SaveOptions {
  /** The previous save of the same sandbox: files whose Docker stat did not change are not read again. */
  previous?: WorkspaceManifest;
  /** The scan folder of the previous save (git's stat cache in the container). */
  scratch?: string;
  maxFileBytes?: number;
}

export interface SavedWorkspace {
  manifest: WorkspaceManifest;
  /** Relative to the run's folder. */
  file: string;
  sha256: string;
  scratch: string;
}

/** Saves what changed in a sandbox's workspace (live or orphaned) into `runDir`, as `name`.json. */
export async function saveWorkspace(
  container: Docker.Container,
  runDir: string,
  name: string,
  opts: SaveOptions = {},
): Promise<SavedWorkspace> {
  const maxFileBytes = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const scan = await scanWorkspace(container, opts.scratch ?? '');
  const blobs = path.join(runDir, BLOBS_DIR);
  await fs.mkdir(blobs, { recursive: true });
  const before = new Map((opts.previous?.files ?? []).map((f) => [f.path, f]));
  const manifest: WorkspaceManifest = { v: 1, files: [], deleted: [], skipped: [] };
  const folders = new Map<string, string | null>();
  const changes: string[] = [];
  for (const p of [...new Set(scan.changes.map((c) => c.path))].sort()) {
    // Below a folder the run replaced by a link, the path is not in the workspace any more (the
    // link is saved on its own); reading it would read where the link points, as root.
    if (await linkedParent(container, p, folders)) manifest.deleted.push(p);
    else changes.push(p);
  }
  const ctimes = await changeTimes(container, changes);
  for (const p of changes) {
    const change = { path: p };
    const docker = await statPath(container, change.path);
    if (docker === undefined || ctimes.get(p) === '-') {
      manifest.deleted.push(change.path);
      continue;
    }
    const stat = `${docker}:${ctimes.get(p) ?? ''}`;
    const known = before.get(change.path);
    if (known && known.stat === stat && (known.kind !== 'file' || (await exists(path.join(blobs, known.sha256))))) {
      manifest.files.push(known);
      continue;
    }
    const tmp = path.join(blobs, `.incoming-${randomBytes(8).toString('hex')}`);
    try {
      const e = await readEntry(container, change.path, tmp, maxFileBytes);
      // A file or link replaced by a folder is gone as such; the folder's files are listed on their own.
      if (e.kind === 'missing' || e.kind === 'directory') manifest.deleted.push(change.path);
      else if (e.kind === 'symlink')
        manifest.files.push({ path: e.path, kind: 'symlink', target: e.linkTarget ?? '', uid: e.uid, stat });
      else if (e.kind === 'file' && e.skipped)
        manifest.skipped.push({ path: e.path, size: e.size, reason: `larger than ${maxFileBytes} bytes` });
      else if (e.kind === 'file' && e.sha256) {
        await fs.rename(tmp, path.join(blobs, e.sha256));
        manifest.files.push({
          path: e.path,
          kind: 'file',
          sha256: e.sha256,
          size: e.size,
          mode: e.mode,
          uid: e.uid,
          stat,
        });
      } else manifest.skipped.push({ path: e.path, size: e.size, reason: `a ${e.kind}, not a file or link` });
    } finally {
      await fs.rm(tmp, { force: true });
    }
  }
  manifest.deleted.sort();
  const text = `${JSON.stringify(manifest)}\n`;
  const file = path.join(WORKSPACE_STATE_DIR, `${name}.json`);
  await writeAtomic(path.join(runDir, file), text);
  return { manifest, file, sha256: sha256(text), scratch: scan.scratch };
}

/** A saved workspace is missing or changed: it is not restored at all, so resume refuses. */
export class SavedWorkspaceError extends GatehouseError {
  readonly kind = 'refused';
}

/**
 * Reads a saved workspace back and checks it whole: the manifest against the hash recorded for it
 * (when there is one) and every file's bytes against their hash. Anything missing or changed is an
 * error naming it: a workspace that cannot be restored exactly is not restored at all.
 */
export async function loadWorkspace(runDir: string, file: string, expectedSha256?: string): Promise<WorkspaceManifest> {
  const full = path.join(runDir, file);
  const manifest = await readManifest(runDir, file, expectedSha256);
  const problem = manifestProblem(manifest);
  if (problem) throw new SavedWorkspaceError(`${full} cannot be restored: ${problem}`);
  for (const f of manifest.files) {
    if (f.kind !== 'file') continue;
    const blob = path.join(runDir, BLOBS_DIR, f.sha256);
    const actual = await hashFile(blob).catch(() => undefined);
    if (actual === undefined) throw new SavedWorkspaceError(`the saved content of ${f.path} (${blob}) is missing`);
    if (actual !== f.sha256)
      throw new SavedWorkspaceError(`the saved content of ${f.path} (${blob}) was changed: its hash does not match`);
  }
  return manifest;
}

/** A saved manifest checked against the hash recorded for it (when there is one); blobs not read. */
export async function readManifest(runDir: string, file: string, expectedSha256?: string): Promise<WorkspaceManifest> {
  const full = path.join(runDir, file);
  const text = await fs.readFile(full, 'utf8').catch(() => undefined);
  if (text === undefined) throw new SavedWorkspaceError(`${full} is missing`);
  if (expectedSha256 && sha256(text) !== expectedSha256)
    throw new SavedWorkspaceError(
      `${full} was changed after it was saved (its hash does not match the one in the log)`,
    );
  let manifest: WorkspaceManifest;
  try {
    manifest = WorkspaceManifest.parse(JSON.parse(text));
  } catch (e) {
    throw new SavedWorkspaceError(`${full} is not a saved workspace: ${(e as Error).message.slice(0, 200)}`);
  }
  return manifest;
}

/**
 * What makes a manifest unsafe to restore, if anything: a path that is not a plain workspace path,
 * one listed twice, or one under another saved entry (a link or a file). Docker would extract an
 * entry under a link through it, as root: `a` -> /var/gatehouse then `a/x` writes root's folder.
 * A save never produces these; a crafted or planted manifest can.
 */
export function manifestProblem(m: WorkspaceManifest): string | undefined {
  const entries = new Map<string, SavedEntry['kind']>();
  for (const f of m.files) {
    let normal: string;
    try {
      normal = workspacePath(f.path);
    } catch (e) {
      return (e as Error).message;
    }
    if (normal !== f.path) return `${JSON.stringify(f.path)} is not a plain workspace path`;
    if (entries.has(f.path)) return `${f.path} is listed twice`;
    entries.set(f.path, f.kind);
  }
  for (const f of m.files) {
    for (let d = path.posix.dirname(f.path); d !== '.'; d = path.posix.dirname(d)) {
      const kind = entries.get(d);
      if (kind === 'symlink')
        return `${f.path} is under ${d}, which it saves as a symbolic link (nothing is written through a link)`;
      if (kind) return `${f.path} is under ${d}, which it saves as a file`;
    }
  }
  return undefined;
}

export function blobPath(runDir: string, sha: string): string {
  return path.join(runDir, BLOBS_DIR, sha);
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

export async function hashFile(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}

export async function writeAtomic(file: string, text: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  const h = await fs.open(tmp, 'w', 0o600);
  try {
    await h.writeFile(text);
    await h.sync();
  } finally {
    await h.close();
  }
  await fs.rename(tmp, file);
}

/**
 * Puts a saved workspace into a fresh sandbox made from the same repository: files and links
 * through the archive API (owners and modes kept), then the deletions.
 */
export async function restoreSaved(sandbox: Sandbox, runDir: string, manifest: WorkspaceManifest): Promise<void> {
  const problem = manifestProblem(manifest);
  if (problem) throw new SavedWorkspaceError(`the saved workspace cannot be restored: ${problem}`);
  const items: RestoreItem[] = manifest.files.map((f) =>
    f.kind === 'file'
      ? { path: f.path, kind: 'file', blob: blobPath(runDir, f.sha256), size: f.size, mode: f.mode, uid: f.uid }
      : { path: f.path, kind: 'symlink', target: f.target, uid: f.uid },
  );
  // Deletions first: a deleted file may be where one of the saved files' folders now is.
  await sandbox.removeFiles(manifest.deleted);
  const dirs = new Set<string>();
  for (const f of manifest.files) {
    for (let d = path.posix.dirname(f.path); d !== '.' && d !== '/'; d = path.posix.dirname(d)) dirs.add(d);
  }
  const missing: string[] = [];
  const folders = new Map<string, string | null>();
  for (const d of [...dirs].sort()) {
    // Docker would write through a link (or fail on a file) on the way: refuse before writing anything.
    const bad = await linkedParent(sandbox.container, `${d}/entry`, folders); // d and every folder above it
    if (bad)
      throw new SavedWorkspaceError(
        `the saved workspace cannot be restored: ${bad.dir} is ${bad.what} in the sandbox, and saved files are ` +
          `under it`,
      );
    if ((await statPath(sandbox.container, d)) === undefined) missing.push(d);
  }
  await writeEntries(sandbox.container, items, missing);
}
