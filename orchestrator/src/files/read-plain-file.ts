import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import { GatehouseError } from '../errors';

/** The most gatehouse reads of a repository's config or policy: far more than any real one holds. */
export const MAX_SETTINGS_FILE_BYTES = 1024 * 1024;

/** Why a file was not read: what the caller may tell a person, and the message that says it. */
export type PlainFileProblem = 'missing' | 'symlink' | 'not-regular' | 'too-large' | 'unreadable';

/** A file that may be hostile (the repository's) was not read: it is not a regular file of a bounded size. */
export class PlainFileError extends GatehouseError {
  readonly kind = 'refused';
  constructor(
    readonly file: string,
    readonly problem: PlainFileProblem,
    /** What is wrong, without the file's name: callers put it after their own wording. */
    readonly why: string,
  ) {
    super(`${file}: ${why}`);
    this.name = 'PlainFileError';
  }
}

/**
 * O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever. O_NOFOLLOW:
 * the last component may not be a symbolic link (the caller checks the folders above it).
 */
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The content of a file a repository holds, read so that no file can stall or flood the host: it
 * must be a regular file (not a FIFO, socket, device, folder or symbolic link) of at most
 * `maxBytes`. The kind is checked before opening (so no device is opened) and again on the open
 * descriptor (so a swap in between is caught), and at most `maxBytes + 1` bytes are read whatever
 * size the file claims or grows to. Throws PlainFileError.
 */
export function readPlainFile(file: string, maxBytes: number): Buffer {
  let fd: number;
  try {
    const before = lstatSync(file, { throwIfNoEntry: false });
    if (!before) throw new PlainFileError(file, 'missing', 'no such file');
    refuseKind(file, before);
    fd = openSync(file, FLAGS);
  } catch (e) {
    throw openFailure(file, e as NodeJS.ErrnoException);
  }
  try {
    const st = fstatSync(fd);
    refuseKind(file, st);
    if (st.size > maxBytes) throw tooLarge(file, maxBytes, st.size);
    // The size fstat gave is a hint: the file may grow while it is read, so reading stops past maxBytes.
    let buf = Buffer.allocUnsafe(Math.min(st.size, maxBytes) + 1);
    let at = 0;
    for (;;) {
      if (at === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(Math.min(buf.length, maxBytes + 1 - at))]);
      const n = readSync(fd, buf, at, buf.length - at, null);
      if (n === 0) break;
      at += n;
      if (at > maxBytes) throw tooLarge(file, maxBytes);
    }
    return buf.subarray(0, at);
  } catch (e) {
    if (e instanceof PlainFileError) throw e;
    throw new PlainFileError(file, 'unreadable', `cannot be read: ${(e as Error).message}`);
  } finally {
    closeSync(fd);
  }
}

/** What kind of thing a path is, in words, when it is not a regular file. */
export function fileKind(st: Stats): string {
  if (st.isFile()) return 'a regular file';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

function refuseKind(file: string, st: Stats): void {
  if (st.isSymbolicLink()) throw new PlainFileError(file, 'symlink', 'is a symbolic link, not a regular file');
  if (!st.isFile()) throw new PlainFileError(file, 'not-regular', `is ${fileKind(st)}, not a regular file`);
}

function tooLarge(file: string, maxBytes: number, size?: number): PlainFileError {
  const what = size === undefined ? 'grew past the limit while it was read' : `is ${size} bytes`;
  return new PlainFileError(file, 'too-large', `${what}; at most ${maxBytes} bytes are read from a repository's file`);
}

function openFailure(file: string, e: NodeJS.ErrnoException): PlainFileError {
  if (e instanceof PlainFileError) return e;
  if (e.code === 'ENOENT') return new PlainFileError(file, 'missing', 'no such file');
  if (e.code === 'ELOOP') return new PlainFileError(file, 'symlink', 'is a symbolic link, not a regular file');
  // ENXIO: a socket (or a device with nothing behind it) swapped in after the first look.
  if (e.code === 'ENXIO') return new PlainFileError(file, 'not-regular', 'is not a regular file');
  return new PlainFileError(file, 'unreadable', `cannot be opened: ${e.message}`);
}
