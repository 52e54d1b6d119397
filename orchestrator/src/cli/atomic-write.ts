import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { GatehouseError, type ErrorKind } from '../errors';

/** A file a command was told to write (--out) could not be written. */
export class OutputFileError extends GatehouseError {
  constructor(
    readonly kind: ErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'OutputFileError';
  }
}

/** A path the person gave that cannot be written: theirs to change (exit 2), not the machine's. */
const USAGE_CODES = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'EROFS']);

/**
 * Writes `text` to `file` so a reader (a CI step, a pull-request bot) sees the old file or the new
 * one, never half of one: a temporary file beside it, flushed, then renamed over it.
 */
export function writeFileAtomic(file: string, text: string): void {
  const target = path.resolve(file);
  const tmp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fd = openSync(tmp, 'wx', 0o644);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
  } catch (e) {
    rmSync(tmp, { force: true });
    const code = (e as NodeJS.ErrnoException).code ?? '';
    throw new OutputFileError(
      USAGE_CODES.has(code) ? 'usage' : 'environment',
      `cannot write ${target}: ${(e as Error).message}; ` +
        'give --out a file in a directory that exists and you may write to',
    );
  }
}
