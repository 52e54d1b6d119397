import path from 'node:path';
import { WORKSPACE_ROOT, type ErrorCode, type PathResolution, type ResultStatus } from '@gatehouse/shared';

/** Symlinks followed for one path before giving up, as the daemon (and the kernel) do. */
const MAX_LINK_HOPS = 40;

/** A refusal or failure of a primitive, as the daemon reports it (sandbox-agent/src/errors.ts). */
export class PrimitiveFailure extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly status: Extract<ResultStatus, 'rejected' | 'failed'> = 'rejected',
    readonly path?: string,
  ) {
    super(message);
  }
}

export interface MemoryWorkspaceInit {
  /** Workspace-relative path → content. Parent directories exist implicitly. */
  files?: Record<string, string>;
  /** Empty directories. */
  dirs?: string[];
  /**
   * Symbolic links: workspace-relative link path → target as `ln -s` would be given it (relative
   * to the link's directory, or absolute).
   */
  links?: Record<string, string>;
}

/** A path a primitive may touch: workspace-relative, every link followed. */
export interface WorkspaceTarget {
  rel: string;
  exists: boolean;
  isDirectory: boolean;
}

/**
 * A workspace held in memory, for tests of the orchestrator that need no Docker: files,
 * directories and symbolic links under /workspace, with the daemon's containment rules (a path
 * that leaves the workspace, lexically or through a link, is refused) and its `resolve` answers.
 */
export class MemoryWorkspace {
  readonly files = new Map<string, string>();
  readonly dirs = new Set<string>(['.']);
  readonly links = new Map<string, string>();

  constructor(init: MemoryWorkspaceInit = {}) {
    for (const [p, content] of Object.entries(init.files ?? {})) this.write(relOf(p), content);
    for (const d of init.dirs ?? []) this.mkdirs(relOf(d));
    for (const [p, target] of Object.entries(init.links ?? {})) {
      const rel = relOf(p);
      this.mkdirs(parentOf(rel));
      this.links.set(rel, target);
    }
  }

  /** Where a path really leads, for the policy: like the daemon's `Workspace.locate`, it never throws. */
  locate(input: string): PathResolution {
    if (input.includes('\0')) return { path: input, exists: false, outside: false, error: 'path contains a NUL byte' };
    const followed = this.follow(path.posix.resolve(WORKSPACE_ROOT, input));
    if (!followed) return { path: input, exists: false, outside: false, error: 'too many levels of symbolic links' };
    const outside = !inside(followed.abs);
    const real = outside ? followed.abs : relOfAbs(followed.abs);
    const exists = !outside && (this.files.has(real) || this.dirs.has(real));
    return { path: input, real, exists, outside, ...(followed.dangling ? { dangling: true } : {}) };
  }

  /** A path for access: refused when it leaves the workspace, or leads elsewhere than the policy decided on. */
  resolve(input: string, expectReal?: string): WorkspaceTarget {
    const where = this.locate(input);
    if (where.error !== undefined) throw new PrimitiveFailure('invalid_path', where.error, 'rejected', input);
    if (where.outside || where.real === undefined) {
      throw new PrimitiveFailure('path_outside_workspace', `${input} is outside the workspace`, 'rejected', input);
    }
    const rel = where.real;
    if (expectReal !== undefined && rel !== expectReal) {
      throw new PrimitiveFailure(
        'path_changed',
        `${input} now resolves to ${rel}, not to ${expectReal} as when the policy decided on it ` +
          '(a symbolic link changed meanwhile); nothing was done: propose the call again',
        'rejected',
        input,
      );
    }
    return { rel, exists: this.files.has(rel) || this.dirs.has(rel), isDirectory: this.dirs.has(rel) };
  }

  /** The content of a regular file, or the daemon's error for what is there instead. */
  read(target: WorkspaceTarget): string {
    if (target.isDirectory)
      throw new PrimitiveFailure(
        'is_directory',
        `${target.rel} is a directory; list it instead`,
        'rejected',
        target.rel,
      );
    const content = this.files.get(target.rel);
    if (content === undefined)
      throw new PrimitiveFailure('not_found', `${target.rel} does not exist`, 'failed', target.rel);
    return content;
  }

  write(rel: string, content: string): void {
    if (this.dirs.has(rel)) throw new PrimitiveFailure('is_directory', `${rel} is a directory`, 'rejected', rel);
    this.mkdirs(parentOf(rel));
    this.files.set(rel, content);
  }

  remove(rel: string): void {
    this.files.delete(rel);
  }

  /** Entries directly in (or, recursively, below) a directory, `.git` skipped, in name order. */
  entries(dir: string, recursive: boolean): Array<{ path: string; type: 'file' | 'dir' | 'symlink' }> {
    const all = [
      ...[...this.files.keys()].map((p) => ({ path: p, type: 'file' as const })),
      ...[...this.dirs].filter((d) => d !== '.').map((p) => ({ path: p, type: 'dir' as const })),
      ...[...this.links.keys()].map((p) => ({ path: p, type: 'symlink' as const })),
    ];
    const prefix = dir === '.' ? '' : `${dir}/`;
    return all
      .filter((e) => e.path.startsWith(prefix) && e.path !== dir)
      .filter((e) => recursive || !e.path.slice(prefix.length).includes('/'))
      .filter((e) => !e.path.split('/').includes('.git'))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** The files and their contents now, to tell later what changed. */
  snapshot(): Map<string, string> {
    return new Map(this.files);
  }

  private has(rel: string): boolean {
    return this.files.has(rel) || this.dirs.has(rel) || this.links.has(rel);
  }

  private mkdirs(rel: string): void {
    for (let d = rel; d !== '.' && !this.dirs.has(d); d = parentOf(d)) this.dirs.add(d);
  }

  /** The absolute path with every link on the way followed (a dangling link to where it points). */
  private follow(abs: string): { abs: string; dangling: boolean } | undefined {
    let dangling = false;
    for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
      if (!inside(abs)) return { abs, dangling };
      const parts = relOfAbs(abs).split('/');
      let next: string | undefined;
      for (let i = 1; i <= parts.length && next === undefined; i++) {
        const prefix = parts.slice(0, i).join('/');
        const target = this.links.get(prefix);
        if (target === undefined) continue;
        const pointed = path.posix.resolve(path.posix.dirname(`${WORKSPACE_ROOT}/${prefix}`), target);
        next = path.posix.join(pointed, ...parts.slice(i));
        // A link to nothing (inside; what lies outside is not ours to know) is followed all the same.
        if (inside(pointed) && !this.has(relOfAbs(pointed))) dangling = true;
      }
      if (next === undefined) return { abs, dangling };
      abs = next;
    }
    return undefined;
  }
}

function inside(abs: string): boolean {
  return abs === WORKSPACE_ROOT || abs.startsWith(`${WORKSPACE_ROOT}/`);
}

function relOfAbs(abs: string): string {
  return abs === WORKSPACE_ROOT ? '.' : abs.slice(WORKSPACE_ROOT.length + 1);
}

/** A workspace path as the daemon keys it (`./src/../a` is `a`); refuses one outside. */
export function relOf(p: string): string {
  const abs = path.posix.resolve(WORKSPACE_ROOT, p);
  if (!inside(abs)) throw new Error(`${p} is outside the workspace`);
  return relOfAbs(abs);
}

function parentOf(rel: string): string {
  const dir = path.posix.dirname(rel);
  return dir === '' ? '.' : dir;
}
