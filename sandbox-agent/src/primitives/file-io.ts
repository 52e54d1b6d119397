import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fchmodSync,
  fstatSync,
  lstatSync,
  readlinkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { sha256Hex } from '@gatehouse/shared';
import { asCommandUser } from '../as-user';
import { PrimitiveError, errnoCode } from '../errors';
import type { CommandUser } from '../users';
import { O_READ, O_WRITE_NEW, type ResolvedPath } from '../workspace';

/** Files larger than this are not read whole (hashing needs the whole file). */
export const MAX_READ_BYTES = 64 * 1024 * 1024;

/**
 * Synchronous on purpose, like the path checks (see workspace.ts): these are small local-volume
 * operations, and each thread-pool round trip would cost more than the work. The largest blocking
 * read is MAX_READ_BYTES, tens of milliseconds at worst.
 */
export async function readRegularFile(target: ResolvedPath): Promise<Buffer> {
  if (!target.exists) throw new PrimitiveError('not_found', `${target.rel} does not exist`, 'failed', target.rel);
  let fd: number;
  try {
    fd = openSync(target.real, O_READ);
  } catch (e) {
    throw ioError(e, target.rel);
  }
  try {
    // What was opened is what was resolved: a folder on the way swapped for a link after the check
    // would show here. Checked on the descriptor itself (8 µs) rather than by switching the daemon's
    // uid for the read (300 µs: glibc broadcasts every setxid call to all of Node's threads).
    if (readlinkSync(`/proc/self/fd/${fd}`) !== target.real) {
      throw new PrimitiveError(
        'path_changed',
        `${target.rel} led somewhere else when it was opened; nothing was read`,
        'rejected',
        target.rel,
      );
    }
    const st = fstatSync(fd);
    if (st.isDirectory()) {
      throw new PrimitiveError('is_directory', `${target.rel} is a directory; list it instead`, 'rejected', target.rel);
    }
    if (!st.isFile())
      throw new PrimitiveError('invalid_path', `${target.rel} is not a regular file`, 'rejected', target.rel);
    if (st.size > MAX_READ_BYTES) {
      throw new PrimitiveError(
        'too_large',
        `${target.rel} is ${st.size} bytes; the limit is ${MAX_READ_BYTES}`,
        'rejected',
        target.rel,
      );
    }
    return readFileSync(fd);
  } catch (e) {
    throw ioError(e, target.rel);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes through a temporary file and a rename, so a reader never sees half a file and a crash
 * never leaves one. The temporary file is created with O_EXCL|O_NOFOLLOW in the real directory.
 * All of it runs as the command user (as-user.ts): what it creates is that user's, the mode of an
 * existing file is kept, and a file the policy locks cannot be replaced, by the daemon either.
 */
export async function writeAtomically(
  target: ResolvedPath,
  content: string | Buffer,
  user: CommandUser,
): Promise<void> {
  asCommandUser(user, () => writeAsIs(target, content));
}

function writeAsIs(target: ResolvedPath, content: string | Buffer): void {
  const dir = path.dirname(target.real);
  let mode = 0o644;
  try {
    if (target.exists) {
      const st = lstatSync(target.real);
      if (st.isDirectory())
        throw new PrimitiveError('is_directory', `${target.rel} is a directory`, 'rejected', target.rel);
      if (!st.isFile())
        throw new PrimitiveError('invalid_path', `${target.rel} is not a regular file`, 'rejected', target.rel);
      mode = st.mode & 0o7777;
    } else {
      mkdirSync(dir, { recursive: true });
    }
  } catch (e) {
    throw ioError(e, target.rel);
  }
  const tmp = path.join(dir, `.gatehouse-tmp-${randomBytes(6).toString('hex')}`);
  try {
    const fd = openSync(tmp, O_WRITE_NEW, mode);
    try {
      writeFileSync(fd, content);
      fchmodSync(fd, mode);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target.real);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw ioError(e, target.rel);
  }
}

export function ioError(e: unknown, rel: string): PrimitiveError {
  if (e instanceof PrimitiveError) return e;
  const code = errnoCode(e);
  if (code === 'ENOENT') return new PrimitiveError('not_found', `${rel} does not exist`, 'failed', rel);
  if (code === 'EISDIR') return new PrimitiveError('is_directory', `${rel} is a directory`, 'rejected', rel);
  if (code === 'ENOTDIR')
    return new PrimitiveError('not_a_directory', `a parent of ${rel} is not a directory`, 'failed', rel);
  if (code === 'EACCES' || code === 'EPERM') {
    return new PrimitiveError(
      'io_error',
      `${rel}: ${code}: the command user may not do this (paths the policy denies writing are read-only in the ` +
        `sandbox)`,
      'failed',
      rel,
    );
  }
  if (code === 'ELOOP')
    return new PrimitiveError(
      'path_outside_workspace',
      `${rel} became a symbolic link; refusing to follow it`,
      'rejected',
      rel,
    );
  return new PrimitiveError(
    'io_error',
    `${rel}: ${code ?? (e instanceof Error ? e.message : String(e))}`,
    'failed',
    rel,
  );
}

export function hashOf(content: string | Buffer): string {
  return sha256Hex(content);
}

/** stat (following links: the path is already resolved) with errors mapped for the model. */
export function statOrThrow(target: ResolvedPath): Stats {
  try {
    return statSync(target.real);
  } catch (e) {
    throw ioError(e, target.rel);
  }
}
