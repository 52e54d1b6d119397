import { readdirSync, type Dirent } from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import tar from 'tar-fs';
import type { PathDenial } from '../policy/path-denial';
import { DAEMON_UID, SANDBOX_UID, WORKSPACE } from './container';
import { historyMayHold } from './git-history';
import { nodeStream } from './streams';

/** Workspace paths to make read-only to commands (the daemon also locks their parent directories). */
export interface ProtectList {
  /** Files, links and directories the policy denies writing, owned by root in the copy. */
  entries: string[];
  /** Directories under which every path is denied: nothing can be created in them either. */
  dirs: string[];
}

export interface CopyReport {
  /** Paths left out because the policy denies reading them (a withheld directory is listed alone). */
  withheld: string[];
  protect: ProtectList;
  /**
   * Set when the repository's .git could hand back something withheld (git-history.ts says why):
   * it was not copied, and the daemon starts a fresh repository whose one commit is the workspace
   * as copied.
   */
  freshRepository: boolean;
  freshRepositoryReason?: string;
}

export interface CopyOptions {
  ignore?: (relPath: string) => boolean;
  rules?: PathDenial;
}

/**
 * Copies a repository into a sandbox's workspace with tar-fs (never a bind mount). Files belong to
 * the command user, except those the policy denies writing, which belong to root and lose their
 * group and other write bits. What the policy denies reading is not copied at all, so no command,
 * glob or symlink inside the sandbox can reach it.
 */
export async function copyRepository(
  container: Docker.Container,
  repoDir: string,
  opts: CopyOptions,
): Promise<CopyReport> {
  const rules = opts.rules;
  const withholds = (rel: string): boolean =>
    rules !== undefined && rel !== '' && (rules.readDenied(rel) || rules.readDeniedBelow(rel));
  const reason =
    rules === undefined
      ? undefined
      : (anyWithheld(repoDir, '', withholds, opts.ignore) ?? (await historyMayHold(repoDir, withholds)));
  const freshRepository = reason !== undefined;
  const report: CopyReport = {
    withheld: [],
    protect: { entries: [], dirs: [] },
    freshRepository,
    ...(reason === undefined ? {} : { freshRepositoryReason: reason }),
  };
  const pack = tar.pack(repoDir, {
    ignore: (name: string) => {
      const rel = name.slice(repoDir.length + 1);
      if (opts.ignore?.(rel)) return true;
      if (freshRepository && isGitDir(rel)) return true;
      if (withholds(rel)) {
        report.withheld.push(rel);
        return true;
      }
      return false;
    },
    map: (header) => {
      const rel = header.name.replace(/^\.\/?/, '').replace(/\/$/, '');
      const isDir = header.type === 'directory';
      const whole = isDir && rules !== undefined && rel !== '' && rules.writeDeniedBelow(rel);
      const locked = whole || (rules !== undefined && rel !== '' && rules.writeDenied(rel));
      if (whole) report.protect.dirs.push(rel);
      else if (locked) report.protect.entries.push(rel);
      const uid = locked ? DAEMON_UID : SANDBOX_UID;
      const mode = locked && header.mode !== undefined ? header.mode & ~0o022 : header.mode;
      return {
        ...header,
        uid,
        gid: uid,
        uname: locked ? 'root' : 'sandbox',
        gname: locked ? 'root' : 'sandbox',
        ...(mode === undefined ? {} : { mode }),
      };
    },
  });
  await container.putArchive(nodeStream(pack), { path: WORKSPACE });
  return report;
}

/** `.git` at any depth (submodules and nested repositories keep their objects there too). */
function isGitDir(rel: string): boolean {
  return rel === '.git' || rel.startsWith('.git/') || rel.endsWith('/.git') || rel.includes('/.git/');
}

/**
 * Why the copy must leave every .git out, found before copying (the copy must know before it reaches
 * one): a path it will withhold (git objects could hold its content), or a nested repository (its
 * objects are not checked by git-history.ts). Stops at the first; .git itself is not searched.
 */
function anyWithheld(
  root: string,
  rel: string,
  withholds: (rel: string) => boolean,
  ignore?: (rel: string) => boolean,
): string | undefined {
  let entries: Dirent[];
  try {
    entries = readdirSync(path.join(root, rel), { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const e of entries) {
    const child = rel === '' ? e.name : `${rel}/${e.name}`;
    if (ignore?.(child)) continue;
    if (e.name === '.git') {
      if (rel !== '') return `${child} is a nested repository, whose objects are not checked`;
      continue;
    }
    if (withholds(child)) return 'files the policy denies reading are withheld, and git objects could hold them';
    if (e.isDirectory()) {
      const why = anyWithheld(root, child, withholds, ignore);
      if (why) return why;
    }
  }
  return undefined;
}
