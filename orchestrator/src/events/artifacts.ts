import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { sha256Hex } from '@gatehouse/shared';
import { Redactor } from './redact';
import { GatehouseError } from '../errors';

/** A reference to a stored artifact: `art-` and the first 16 hex digits of its SHA-256. */
export const ARTIFACT_REF = /^art-[0-9a-f]{16}$/;
export const DEFAULT_READ_LIMIT = 64 * 1024;

export interface ArtifactInfo {
  ref: string;
  /** Stored size, after redaction. */
  bytes: number;
  /** SHA-256 of the stored (redacted) bytes. */
  sha256: string;
}

export interface ArtifactPage {
  ref: string;
  /** Where this page starts: the requested offset, moved back to a character start if needed. */
  offset: number;
  /** Bytes returned; the next page starts at offset + bytes. */
  bytes: number;
  totalBytes: number;
  text: string;
  eof: boolean;
}

/** An artifact that does not exist, or a read of it out of range: nothing is returned. */
export class ArtifactError extends GatehouseError {
  readonly kind = 'refused';
  constructor(message: string) {
    super(message);
    this.name = 'ArtifactError';
  }
}

const isContinuation = (b: number | undefined): boolean => b !== undefined && (b & 0xc0) === 0x80;

/**
 * Full tool outputs, content-addressed, beside a run's event log. Content is redacted before it is
 * hashed or written, so the hash names what is on disk and no secret ever reaches the folder.
 * Writes are atomic (temporary file, then rename): a reader sees a whole artifact or none.
 */
export class ArtifactStore {
  readonly #redactor: Redactor;
  /** Written since the last sync(): fsynced there, with the directory, so a crash cannot lose them. */
  #unsynced: string[] = [];
  #dirReady = false;

  constructor(
    readonly dir: string,
    redactor: Redactor = Redactor.patternsOnly(),
  ) {
    this.#redactor = redactor;
  }

  put(content: string | Uint8Array): ArtifactInfo {
    const bytes =
      typeof content === 'string'
        ? Buffer.from(this.#redactor.redact(content), 'utf8')
        : this.#redactor.redactBytes(content);
    const sha256 = sha256Hex(bytes);
    const ref = `art-${sha256.slice(0, 16)}`;
    const file = path.join(this.dir, ref);
    if (!existsSync(file)) {
      if (!this.#dirReady) {
        mkdirSync(this.dir, { recursive: true });
        this.#dirReady = true;
      }
      const tmp = path.join(this.dir, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
      try {
        writeFileSync(tmp, bytes, { flag: 'wx' });
        renameSync(tmp, file);
      } catch (e) {
        rmSync(tmp, { force: true });
        throw e;
      }
      this.#unsynced.push(file);
    }
    return { ref, bytes: bytes.length, sha256 };
  }

  has(ref: string): boolean {
    return ARTIFACT_REF.test(ref) && existsSync(path.join(this.dir, ref));
  }

  /**
   * A page of an artifact as text. `offset` and `limit` are in bytes. A page never splits a UTF-8
   * character: a start inside one moves back to its first byte, an end inside one moves back to
   * before it; when the limit is smaller than the character at the start, the page holds that one
   * whole character (a few bytes over the limit) so paging always makes progress.
   */
  read(ref: string, offset = 0, limit = DEFAULT_READ_LIMIT): ArtifactPage {
    if (!ARTIFACT_REF.test(ref))
      throw new ArtifactError(
        `invalid artifact ref ${JSON.stringify(ref)}: expected "art-" followed by 16 lowercase hex digits`,
      );
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw new ArtifactError(`invalid offset ${offset}: expected an integer >= 0`);
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new ArtifactError(`invalid limit ${limit}: expected an integer >= 1`);
    let fd: number;
    try {
      fd = openSync(path.join(this.dir, ref), 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw new ArtifactError(`artifact ${ref} not found in ${this.dir}`);
      throw e;
    }
    try {
      const totalBytes = fstatSync(fd).size;
      if (offset >= totalBytes) return { ref, offset: totalBytes, bytes: 0, totalBytes, text: '', eof: true };
      // Read a few bytes either side of the window to see where characters start.
      const from = Math.max(0, offset - 3);
      const to = Math.min(totalBytes, offset + limit + 4);
      const buf = Buffer.alloc(to - from);
      let got = 0;
      while (got < buf.length) {
        const n = readSync(fd, buf, got, buf.length - got, from + got);
        if (n === 0) break;
        got += n;
      }
      const at = (abs: number): number | undefined => (abs - from < got ? buf[abs - from] : undefined);
      let start = offset;
      for (let i = 0; i < 3 && start > 0 && isContinuation(at(start)); i++) start--;
      let end = Math.min(totalBytes, offset + limit);
      if (end < totalBytes) {
        let e = end;
        for (let i = 0; i < 3 && e > start && isContinuation(at(e)); i++) e--;
        if (e === start) {
          // The character at `start` is longer than the limit: return it whole.
          e = start + 1;
          for (let i = 0; i < 3 && e < totalBytes && isContinuation(at(e)); i++) e++;
        }
        end = e;
      }
      const text = buf.toString('utf8', start - from, end - from);
      return { ref, offset: start, bytes: end - start, totalBytes, text, eof: end >= totalBytes };
    } finally {
      closeSync(fd);
    }
  }

  /** Make every artifact written so far durable (file data, then the directory entry). */
  sync(): void {
    if (this.#unsynced.length === 0) return;
    for (const file of this.#unsynced) {
      const fd = openSync(file, 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    fsyncDir(this.dir);
    this.#unsynced = [];
  }
}

/** fsync a directory so a new entry (file created or renamed) survives power loss. Best effort off Linux. */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL') throw e;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
