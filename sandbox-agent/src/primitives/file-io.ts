import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { sha256Hex } from '@gatehouse/shared';
import { PrimitiveError, errnoCode } from '../errors';
import { O_READ, O_WRITE_NEW, type ResolvedPath } from '../workspace';

/** Files larger than this are not read whole (hashing needs the whole file). */
export const MAX_READ_BYTES = 64 * 1024 * 1024;

export async function readRegularFile(target: ResolvedPath): Promise<Buffer> {
  if (!target.exists) throw new PrimitiveError('not_found', `${target.rel} does not exist`, 'failed', target.rel);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(target.real, O_READ);
  } catch (e) {
    throw ioError(e, target.rel);
  }
  try {
    const st = await handle.stat();
    if (st.isDirectory()) {
      throw new PrimitiveError('is_directory', `${target.rel} is a directory; list it instead`, 'rejected', target.rel);
    }
    if (!st.isFile()) throw new PrimitiveError('invalid_path', `${target.rel} is not a regular file`, 'rejected', target.rel);
    if (st.size > MAX_READ_BYTES) {
      throw new PrimitiveError('too_large', `${target.rel} is ${st.size} bytes; the limit is ${MAX_READ_BYTES}`, 'rejected', target.rel);
    }
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * Writes through a temporary file and a rename, so a reader never sees half a file and a crash
 * never leaves one. The temporary file is created with O_EXCL|O_NOFOLLOW in the real directory.
 */
export async function writeAtomically(target: ResolvedPath, content: string | Buffer): Promise<void> {
  const dir = path.dirname(target.real);
  let mode = 0o644;
  if (target.exists) {
    const st = await fs.lstat(target.real).catch((e: unknown) => {
      throw ioError(e, target.rel);
    });
    if (st.isDirectory()) throw new PrimitiveError('is_directory', `${target.rel} is a directory`, 'rejected', target.rel);
    if (!st.isFile()) throw new PrimitiveError('invalid_path', `${target.rel} is not a regular file`, 'rejected', target.rel);
    mode = st.mode & 0o7777;
  } else {
    await fs.mkdir(dir, { recursive: true }).catch((e: unknown) => {
      throw ioError(e, target.rel);
    });
  }
  const tmp = path.join(dir, `.gatehouse-tmp-${randomBytes(6).toString('hex')}`);
  try {
    const handle = await fs.open(tmp, O_WRITE_NEW, mode);
    try {
      await handle.writeFile(content);
      await handle.chmod(mode);
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, target.real);
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw ioError(e, target.rel);
  }
}

export function ioError(e: unknown, rel: string): PrimitiveError {
  if (e instanceof PrimitiveError) return e;
  const code = errnoCode(e);
  if (code === 'ENOENT') return new PrimitiveError('not_found', `${rel} does not exist`, 'failed', rel);
  if (code === 'EISDIR') return new PrimitiveError('is_directory', `${rel} is a directory`, 'rejected', rel);
  if (code === 'ENOTDIR') return new PrimitiveError('not_a_directory', `a parent of ${rel} is not a directory`, 'failed', rel);
  if (code === 'ELOOP') return new PrimitiveError('path_outside_workspace', `${rel} became a symbolic link; refusing to follow it`, 'rejected', rel);
  return new PrimitiveError('io_error', `${rel}: ${code ?? (e instanceof Error ? e.message : String(e))}`, 'failed', rel);
}

export function hashOf(content: string | Buffer): string {
  return sha256Hex(content);
}
