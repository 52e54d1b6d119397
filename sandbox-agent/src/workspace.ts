import { constants, lstatSync, promises as fs, readlinkSync, realpathSync } from 'node:fs';
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

/** Where a path really leads, as the `resolve` primitive reports it (see Workspace.locate). */
export interface Location {
  path: string;
  /** Workspace-relative when inside, absolute when outside; absent when it cannot be resolved. */
  real?: string;
  exists: boolean;
  outside: boolean;
  dangling?: boolean;
  error?: string;
}

/** Symlinks followed for one path before giving up, as the kernel's own limit (ELOOP). */
const MAX_LINK_HOPS = 40;

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
    if (input.includes('\0'))
      throw new PrimitiveError('invalid_path', 'path contains a NUL byte', 'rejected', printable(input));
    if (input.split('/').some((part) => Buffer.byteLength(part) > 255)) {
      throw new PrimitiveError(
        'invalid_path',
        'a path component is longer than 255 bytes',
        'rejected',
        printable(input),
      );
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
            throw new PrimitiveError(
              'invalid_path',
              `${this.relative(probe)} is a dangling symbolic link`,
              'rejected',
              printable(input),
            );
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
        if (code === 'ENAMETOOLONG')
          throw new PrimitiveError(
            'invalid_path',
            'path is too long for the file system',
            'rejected',
            printable(input),
          );
        if (code !== 'ENOENT' && code !== 'ENOTDIR')
          throw new PrimitiveError('io_error', `cannot resolve path: ${code ?? String(e)}`, 'failed', printable(input));
        if (probe === this.root) throw new PrimitiveError('io_error', 'the workspace root is missing', 'failed');
        missing.unshift(path.basename(probe));
        probe = path.dirname(probe);
      }
    }
    throw new PrimitiveError('invalid_path', 'path is too deep', 'rejected', printable(input));
  }

  /**
   * `resolve`, refusing when the path now leads elsewhere than `expectReal`, the resolved path the
   * orchestrator's policy decided on: a symlink swapped in between must not redirect the call.
   */
  async resolveExpecting(input: string, expectReal: string | undefined): Promise<ResolvedPath> {
    const target = await this.resolve(input);
    if (expectReal !== undefined && target.rel !== expectReal) {
      throw new PrimitiveError(
        'path_changed',
        `${printable(input)} now resolves to ${target.rel}, not to ${printable(expectReal)} as when the policy ` +
          'decided on it (a symbolic link changed meanwhile); nothing was done: propose the call again',
        'rejected',
        printable(input),
      );
    }
    return target;
  }

  /**
   * Where a path really leads, for the policy rather than for access: every symlink resolved (a
   * dangling one followed to where it points), a missing tail kept as written below its deepest
   * existing ancestor. Unlike `resolve` it reports paths outside the workspace instead of refusing
   * them, and never throws: a problem with one path is that path's `error`.
   */
  locate(input: string): Location {
    if (input.includes('\0')) return { path: input, exists: false, outside: false, error: 'path contains a NUL byte' };
    let target = path.resolve(this.root, input);
    let dangling = false;
    for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
      const step = this.deepestReal(target);
      if ('error' in step) return { path: input, exists: false, outside: false, error: step.error };
      if ('real' in step) {
        const outside = !this.contains(step.real);
        const real = outside ? step.real : this.relative(step.real);
        return { path: input, real, exists: step.exists, outside, ...(dangling ? { dangling } : {}) };
      }
      target = step.next;
      dangling = true;
    }
    return { path: input, exists: false, outside: false, error: 'too many levels of symbolic links' };
  }

  /**
   * The realpath of `target` (or of its deepest existing ancestor, plus the rest), or, when a
   * dangling link is on the way, where that link points.
   */
  private deepestReal(target: string): { real: string; exists: boolean } | { next: string } | { error: string } {
    const missing: string[] = [];
    let probe = target;
    for (let depth = 0; depth < 4096; depth++) {
      try {
        return { real: path.join(realpathSync.native(probe), ...missing), exists: missing.length === 0 };
      } catch (e) {
        const code = errnoCode(e);
        if (code === 'ELOOP') return { error: 'a symbolic link loop' };
        if (code === 'ENAMETOOLONG') return { error: 'path is too long for the file system' };
        if (code !== 'ENOENT' && code !== 'ENOTDIR') return { error: `cannot resolve path: ${code ?? String(e)}` };
        const link = linkTarget(probe);
        // A dangling link is read relative to its real directory, as the kernel would follow it.
        if (link !== undefined) {
          try {
            return { next: path.resolve(realpathSync.native(path.dirname(probe)), link, ...missing) };
          } catch (inner) {
            return { error: `cannot resolve path: ${errnoCode(inner) ?? String(inner)}` };
          }
        }
        if (probe === path.dirname(probe)) return { error: 'nothing on the path exists' };
        missing.unshift(path.basename(probe));
        probe = path.dirname(probe);
      }
    }
    return { error: 'path is too deep' };
  }

  private finish(realAncestor: string, missing: string[], input: string): ResolvedPath {
    if (!this.contains(realAncestor)) throw outside(input);
    const real = path.join(realAncestor, ...missing);
    if (!this.contains(real)) throw outside(input);
    return { real, rel: this.relative(real), exists: missing.length === 0 };
  }
}

/** The target of `p` if it is a symbolic link, else undefined. */
function linkTarget(p: string): string | undefined {
  try {
    return lstatSync(p).isSymbolicLink() ? readlinkSync(p) : undefined;
  } catch {
    return undefined;
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
