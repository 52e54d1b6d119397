import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import tarStream from 'tar-stream';
import { SANDBOX_UID, WORKSPACE } from './container';
import { SandboxError } from './errors';
import { nodeStream } from './streams';
import { statusOf } from './docker';

/**
 * One workspace path as the container's file system has it, read through Docker's archive API:
 * type, mode, owner and size come from the tar header Docker writes, so nothing inside the sandbox
 * (a daemon or a command) can forge them.
 */
export interface WorkspaceEntry {
  path: string;
  kind: 'file' | 'symlink' | 'directory' | 'other' | 'missing';
  /** Permission bits as in the container, setuid/setgid/sticky included. */
  mode: number;
  size: number;
  uid: number;
  linkTarget?: string;
  /** Files only, when read: the content's hash (the content itself is in the file given). */
  sha256?: string;
  /** A file over the size limit: listed with its size, content not read. */
  skipped?: boolean;
}

/** A workspace path as a relative POSIX path inside /workspace; anything else is refused. */
export function workspacePath(p: string): string {
  const rel = path.posix.normalize(p);
  if (
    rel === '' ||
    rel === '.' ||
    rel === '..' ||
    rel.startsWith('../') ||
    path.posix.isAbsolute(rel) ||
    rel.includes('\0')
  ) {
    throw new SandboxError(`refusing ${JSON.stringify(p)}: not a path inside the workspace`);
  }
  return rel;
}

/** Docker's stat of a path, as its archive API reports it (the last component is not followed). */
export interface DockerStat {
  size: number;
  /** Go's os.FileMode: type bits high, permission bits low. */
  mode: number;
  mtime: string;
  linkTarget: string;
}

/** os.FileMode bits Docker reports. */
const GO_MODE_DIR = 2 ** 31;
const GO_MODE_SYMLINK = 2 ** 27;

export async function statEntry(container: Docker.Container, rel: string): Promise<DockerStat | undefined> {
  try {
    const res = (await container.infoArchive({ path: path.posix.join(WORKSPACE, workspacePath(rel)) })) as {
      headers?: Record<string, string>;
      resume?: () => void;
    };
    res.resume?.();
    const raw = res.headers?.['x-docker-container-path-stat'];
    if (!raw) return undefined;
    return JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as DockerStat;
  } catch (e) {
    if (statusOf(e) === 404) return undefined;
    throw e;
  }
}

/** Docker's own stat of a path (no content): for deciding whether a file changed since last time. */
export async function statPath(container: Docker.Container, rel: string): Promise<string | undefined> {
  const st = await statEntry(container, rel);
  return st && `${st.size}:${st.mode}:${st.mtime}:${st.linkTarget}`;
}

/**
 * The first folder on the way to `rel` that is not a real folder in the container (a link, a
 * file), or undefined when every one is a folder or missing. Docker's archive API resolves the
 * folders of a path as root inside the container, links included: a path under a link would read
 * or write wherever the link points (root's /var/gatehouse too), so such a path is never used.
 * `seen` caches folders already checked during one save or restore.
 */
export async function linkedParent(
  container: Docker.Container,
  rel: string,
  seen = new Map<string, string | null>(),
): Promise<{ dir: string; what: string } | undefined> {
  const parts = workspacePath(rel).split('/');
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    let what = seen.get(dir);
    if (what === undefined) {
      const st = await statEntry(container, dir);
      if (!st) what = 'missing';
      else if ((st.mode & GO_MODE_SYMLINK) !== 0 || st.linkTarget !== '') what = 'a symbolic link';
      else if ((st.mode & GO_MODE_DIR) === 0) what = 'not a folder';
      else what = null;
      seen.set(dir, what);
    }
    // Nothing below a missing folder exists to be read through it.
    if (what === 'missing') return undefined;
    if (what !== null) return { dir, what };
  }
  return undefined;
}

/**
 * Reads one workspace path. A regular file within `maxBytes` is streamed to `dest` (never held in
 * memory, so large files are fine) and hashed on the way; anything else is described only.
 */
export async function readEntry(
  container: Docker.Container,
  rel: string,
  dest: string,
  maxBytes: number,
): Promise<WorkspaceEntry> {
  const p = workspacePath(rel);
  let stream: NodeJS.ReadableStream & { destroy?: () => void };
  try {
    stream = await container.getArchive({ path: path.posix.join(WORKSPACE, p) });
  } catch (e) {
    if (statusOf(e) === 404) return { path: p, kind: 'missing', mode: 0, size: 0, uid: 0 };
    throw e;
  }
  const extract = tarStream.extract();
  return new Promise<WorkspaceEntry>((resolve, reject) => {
    let done = false;
    const finish = (entry: WorkspaceEntry): void => {
      done = true;
      // Only the first entry matters (a directory would stream its whole tree): stop reading.
      stream.destroy?.();
      resolve(entry);
    };
    extract.on('entry', (header, body, next) => {
      if (done) {
        body.resume();
        return next();
      }
      const base: WorkspaceEntry = {
        path: p,
        kind: kindOf(header.type),
        mode: (header.mode ?? 0) & 0o7777,
        size: header.size ?? 0,
        uid: header.uid ?? -1,
      };
      if (header.type === 'symlink') return finish({ ...base, linkTarget: header.linkname ?? '' });
      if (base.kind !== 'file') return finish(base);
      if (base.size > maxBytes) return finish({ ...base, skipped: true });
      const hash = createHash('sha256');
      body.on('data', (c: unknown) => hash.update(c as Buffer));
      pipeline(body, createWriteStream(dest, { mode: 0o600 }))
        .then(() => finish({ ...base, sha256: hash.digest('hex') }))
        .catch(reject);
    });
    extract.on('finish', () => done || reject(new SandboxError(`reading ${p} from the sandbox: empty archive`)));
    extract.on('error', (e) => done || reject(e));
    stream.on('error', (e: Error) => done || reject(e));
    stream.pipe(extract);
  });
}

function kindOf(type: string | undefined | null): WorkspaceEntry['kind'] {
  if (type === 'file' || type === 'contiguous-file') return 'file';
  if (type === 'symlink') return 'symlink';
  if (type === 'directory') return 'directory';
  return 'other';
}

/** What to put back into a workspace: a file from a saved blob, or a link. */
export type RestoreItem =
  | { path: string; kind: 'file'; blob: string; size: number; mode: number; uid: number }
  | { path: string; kind: 'symlink'; target: string; uid: number };

/**
 * Writes files and links into a workspace through the archive API, byte for byte. Owners are kept
 * (the command user, or root for a path the command user may not write); folders that do not
 * exist yet are created owned by the command user, as the run would have made them.
 */
export async function writeEntries(
  container: Docker.Container,
  items: RestoreItem[],
  missingDirs: string[],
): Promise<void> {
  if (items.length === 0 && missingDirs.length === 0) return;
  const pack = tarStream.pack();
  const owner = (uid: number) => (uid === 0 ? 0 : SANDBOX_UID);
  const fill = async (): Promise<void> => {
    for (const d of missingDirs)
      pack.entry({ name: workspacePath(d), type: 'directory', mode: 0o755, uid: SANDBOX_UID, gid: SANDBOX_UID });
    for (const it of items) {
      const name = workspacePath(it.path);
      if (it.kind === 'symlink') {
        pack.entry({ name, type: 'symlink', linkname: it.target, uid: owner(it.uid), gid: owner(it.uid) });
        continue;
      }
      await new Promise<void>((resolve, reject) => {
        const entry = pack.entry(
          { name, type: 'file', size: it.size, mode: it.mode & 0o777, uid: owner(it.uid), gid: owner(it.uid) },
          (err) => (err ? reject(err) : resolve()),
        );
        pipeline(createReadStream(it.blob), entry).catch(reject);
      });
    }
    pack.finalize();
  };
  const filled = fill().catch((e: Error) => pack.destroy(e));
  await container.putArchive(nodeStream(pack), { path: WORKSPACE });
  await filled;
}
