import { constants, lstatSync, promises as fs, realpathSync } from 'node:fs';
import path from 'node:path';
import { PrimitiveError, errnoCode } from './errors';

export interface ResolvedPath {
  /** Real absolute path, every symlink resolved, inside the workspace. */
  real: string;
  /** Path relative to the workspace root, for messages ('.' for the root). */
  rel: string;
  /** Whether something exists at the path. */
  exists: boolean;
}

/**
 * The workspace boundary. Every path a primitive touches goes through `resolve`, which checks
 * containment twice: lexically (after normalising `..`), then with realpath of the path or of its
 * deepest existing ancestor, so a symlink anywhere on the way cannot lead outside. File access then
 * uses O_NOFOLLOW on the resolved path, so a symlink swapped in after the check is not followed.
 * The container is the real boundary; this is the daemon's own second line.
 *
 * The checks use synchronous calls on purpose: each is a few microseconds on the local volume,
 * while a round trip through libuv's thread pool costs ~0.2 ms in a CPU-limited container, and
 * a read would pay it several times over.
 */
export class Workspace {
  private constructor(readonly root: string) {}

  static async open(root: string): Promise<Workspace> {
    return new Workspace(await fs.realpath(root));
  }

  contains(p: string): boolean {
    return p === this.root || p.startsWith(this.root + path.sep);
  }

  relative(real: string): string {
    return path.relative(this.root, real) || '.';
  }

  async resolve(input: string): Promise<ResolvedPath> {
    if (input.includes('\0')) throw new PrimitiveError('invalid_path', 'path contains a NUL byte', 'rejected', printable(input));
    if (input.split('/').some((part) => Buffer.byteLength(part) > 255)) {
      throw new PrimitiveError('invalid_path', 'a path component is longer than 255 bytes', 'rejected', printable(input));
    }
    const lexical = path.resolve(this.root, input);
    if (!this.contains(lexical)) throw outside(input);

    // Walk up to the deepest ancestor that exists, remembering the parts below it.
    const missing: string[] = [];
    let probe = lexical;
    for (let depth = 0; depth < 4096; depth++) {
      try {
        const st = lstatSync(probe);
        if (st.isSymbolicLink()) {
          let target: string;
          try {
            target = realpathSync.native(probe);
          } catch {
            // A dangling symlink: writing through it would create its target, wherever it points.
            throw new PrimitiveError('invalid_path', `${this.relative(probe)} is a dangling symbolic link`, 'rejected', printable(input));
          }
          if (!this.contains(target)) throw outside(input);
          return this.finish(target, missing, input);
        }
        return this.finish(realpathSync.native(probe), missing, input);
      } catch (e) {
        if (e instanceof PrimitiveError) throw e;
        const code = errnoCode(e);
        // A path the kernel cannot even look up (over PATH_MAX once joined to the root) is a bad
        // request, refused before anything happened, not an I/O failure of an action that ran.
        if (code === 'ENAMETOOLONG') throw new PrimitiveError('invalid_path', 'path is too long for the file system', 'rejected', printable(input));
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new PrimitiveError('io_error', `cannot resolve path: ${code ?? String(e)}`, 'failed', printable(input));
        if (probe === this.root) throw new PrimitiveError('io_error', 'the workspace root is missing', 'failed');
        missing.unshift(path.basename(probe));
        probe = path.dirname(probe);
      }
    }
    throw new PrimitiveError('invalid_path', 'path is too deep', 'rejected', printable(input));
  }

  private finish(realAncestor: string, missing: string[], input: string): ResolvedPath {
    if (!this.contains(realAncestor)) throw outside(input);
    const real = path.join(realAncestor, ...missing);
    if (!this.contains(real)) throw outside(input);
    return { real, rel: this.relative(real), exists: missing.length === 0 };
  }
}

function outside(input: string): PrimitiveError {
  return new PrimitiveError(
    'path_outside_workspace',
    'path resolves outside the workspace; use a path inside /workspace (relative paths are relative to it)',
    'rejected',
    printable(input),
  );
}

/** Paths echoed back in errors are bounded and free of control characters. */
function printable(p: string): string {
  const clean = p.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 256 ? `${clean.slice(0, 256)}…` : clean;
}

// O_NONBLOCK: opening a FIFO for reading otherwise blocks until a writer appears, which is never
// for a `mkfifo` in the workspace. The read_file call then hung past its timeout, holding one of
// libuv's four threadpool threads, so a few of them froze every file operation of the daemon.
// With O_NONBLOCK the open returns at once and the fstat check refuses the non-regular file.
// (It changes nothing for regular files.)
export const O_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
export const O_WRITE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
