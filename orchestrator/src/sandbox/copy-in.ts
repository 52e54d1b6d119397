import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import type { PathDenial } from '../policy/path-denial';
import { DAEMON_UID, SANDBOX_UID, WORKSPACE } from './container';
import { listRepository, type ListedEntry, type SkippedPath } from './copy-list';
import { isGitConfigFile, scrubGitCredentials } from './git-config-scrub';
import { historyMayHold } from './git-history';
import { nodeStream } from './streams';
import { packItems, type PackItem } from './tar-pack';

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
  /**
   * Other paths not copied and why: ignored by .gitignore (a wholly ignored folder once, at most
   * 100 then a count), `copy.exclude`, a symbolic link leading outside the repository.
   */
  skipped: SkippedPath[];
  /** Sentences for the person running gatehouse (a link not copied, git failing on the repository). */
  notices: string[];
  /** Files, links and folders copied. */
  copied: number;
  /** Their paths: what setup adds to the workspace is everything else (the setup cache keeps that). */
  copiedPaths: ReadonlySet<string>;
}

export interface CopyOptions {
  /** The caller's own filter (the state directory inside the repository); what it drops is not reported. */
  ignore?: (relPath: string) => boolean;
  rules?: PathDenial;
  /** Globs (policy glob syntax) never copied, whatever git says; a glob naming a folder covers it all. */
  exclude?: string[];
  /** Globs naming ignored paths to copy all the same (`exclude` still wins). */
  include?: string[];
}

/**
 * Copies a repository into a sandbox's workspace through Docker's archive API (never a bind
 * mount): what git would not ignore, plus `include`, minus `exclude` (copy-list.ts). Files belong
 * to the command user, except those the policy denies writing, which belong to root and lose their
 * group and other write bits. What the policy denies reading is not copied at all, so no command,
 * glob or symlink inside the sandbox can reach it.
 */
export async function copyRepository(
  container: Docker.Container,
  repoDir: string,
  opts: CopyOptions = {},
): Promise<CopyReport> {
  return sendCopy(container, await planCopy(repoDir, opts));
}

/** What copyRepository sends, decided on the host alone: made while the sandbox starts (driver.ts). */
export interface CopyPlan {
  repoDir: string;
  items: PackItem[];
  report: CopyReport;
}

/** Packs the planned entries, reading each file as it goes, into the sandbox's workspace. */
export async function sendCopy(container: Docker.Container, plan: CopyPlan): Promise<CopyReport> {
  await container.putArchive(nodeStream(packItems(plan.repoDir, plan.items)), { path: WORKSPACE });
  return plan.report;
}

/** The entries to copy, their owners and modes, and the report: git's listing and the policy's checks. */
export async function planCopy(repoDir: string, opts: CopyOptions = {}): Promise<CopyPlan> {
  const rules = opts.rules;
  const withholds = (rel: string): boolean =>
    rules !== undefined && rel !== '' && (rules.readDenied(rel) || rules.readDeniedBelow(rel));
  const [list, reason] = await Promise.all([
    listRepository(repoDir, {
      ...(opts.ignore ? { ignore: opts.ignore } : {}),
      ...(opts.exclude ? { exclude: opts.exclude } : {}),
      ...(opts.include ? { include: opts.include } : {}),
    }),
    rules === undefined
      ? undefined
      : (anyWithheld(repoDir, '', withholds, opts.ignore) ?? historyMayHold(repoDir, withholds)),
  ]);
  const freshRepository = reason !== undefined;
  const copiedPaths = new Set<string>();
  const report: CopyReport = {
    withheld: [],
    protect: { entries: [], dirs: [] },
    freshRepository,
    ...(reason === undefined ? {} : { freshRepositoryReason: reason }),
    skipped: list.skipped,
    notices: list.notices,
    copied: 0,
    copiedPaths,
  };
  const items: PackItem[] = [];
  const out = new Set<string>();
  for (const { rel, st } of withParents(repoDir, list.entries)) {
    const parent = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
    if (rel !== '' && out.has(parent)) {
      out.add(rel);
      continue;
    }
    if ((freshRepository && isGitDir(rel)) || withholds(rel)) {
      if (!(freshRepository && isGitDir(rel))) report.withheld.push(rel);
      out.add(rel);
      continue;
    }
    const whole = st.isDirectory() && rules !== undefined && rel !== '' && rules.writeDeniedBelow(rel);
    const locked = whole || (rules !== undefined && rel !== '' && rules.writeDenied(rel));
    if (whole) report.protect.dirs.push(rel);
    else if (locked) report.protect.entries.push(rel);
    const uid = locked ? DAEMON_UID : SANDBOX_UID;
    const mode = st.mode & 0o7777;
    items.push({
      rel,
      st,
      uid,
      uname: locked ? 'root' : 'sandbox',
      mode: locked ? mode & ~0o022 : mode,
      ...(st.isFile() && isGitConfigFile(rel) ? { transform: scrubConfig } : {}),
    });
  }
  report.copied = items.length - 1;
  for (const item of items) if (item.rel !== '') copiedPaths.add(item.rel);
  return { repoDir, items, report };
}

/** The listed entries and every folder above them, the root ('') first, parents before children. */
function withParents(repoDir: string, entries: ListedEntry[]): ListedEntry[] {
  const byPath = new Map<string, ListedEntry>();
  for (const e of entries) byPath.set(e.rel, e);
  for (const e of entries) {
    for (let at = e.rel.lastIndexOf('/'); at > 0; at = e.rel.lastIndexOf('/', at - 1)) {
      const dir = e.rel.slice(0, at);
      if (byPath.has(dir)) break;
      byPath.set(dir, { rel: dir, st: lstatSync(path.join(repoDir, dir)) });
    }
  }
  byPath.set('', { rel: '', st: lstatSync(repoDir) });
  return [...byPath.values()].sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
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

/** A git config as copied: without the credentials a user's machine keeps there (git-config-scrub.ts). */
function scrubConfig(content: Buffer): Buffer {
  return Buffer.from(scrubGitCredentials(content.toString('latin1')), 'latin1');
}
