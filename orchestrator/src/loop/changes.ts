import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { SAFE_GIT, SAFE_GIT_ENV } from '@gatehouse/shared';
import type { ApprovalPolicy } from '../policy/approval-policy';
import type { Sandbox } from '../sandbox/index';
import { saveWorkspace, type SavedWorkspace, type WorkspaceManifest } from '../sandbox/workspace-save';
import { applyChangeSet, verifyChangeSet, type ChangeSet } from './change-set';

const run = promisify(execFile);

export interface ExportOptions {
  policy: ApprovalPolicy;
  /** The run's last checkpoint: files that did not change since are not read again. */
  previous?: { manifest: WorkspaceManifest; scratch: string };
  maxFileBytes?: number;
  /** Repository-relative folders never written (the state directory when it is inside the repository). */
  protect?: string[];
  /** A plan run's approved scope: paths outside it are refused (plan/approved-scope.ts). */
  scope?: (path: string) => string | undefined;
}

export interface ExportResult {
  filesChanged: string[];
  diffFile?: string;
  applied: boolean;
  refused: ChangeSet['refused'];
  skipped: ChangeSet['skipped'];
  /** Set when writing failed part way (what was and was not written is in it). */
  applyError?: string;
  saved?: SavedWorkspace;
}

/** Files larger than this are listed in the review diff, not diffed. */
const DIFF_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The sandbox's changes, saved beside the log as files (content from Docker's archive API, never
 * from the daemon), with a review diff made on the host. Written back to the repository only when
 * asked, only for an accepted final answer, and only when every file passes verification: one
 * refused file and nothing is written (the diff stays for review).
 */
export async function exportChanges(
  sandbox: Sandbox,
  runDir: string,
  repoDir: string,
  apply: boolean,
  opts: ExportOptions,
): Promise<ExportResult> {
  const saved = await saveWorkspace(sandbox.container, runDir, 'final', {
    ...(opts.previous ? { previous: opts.previous.manifest, scratch: opts.previous.scratch } : {}),
    ...(opts.maxFileBytes !== undefined ? { maxFileBytes: opts.maxFileBytes } : {}),
  });
  const m = saved.manifest;
  const filesChanged = [...m.files.map((f) => f.path), ...m.deleted, ...m.skipped.map((s) => s.path)].sort();
  if (filesChanged.length === 0) return { filesChanged, applied: false, refused: [], skipped: [], saved };
  const set = await verifyChangeSet(repoDir, runDir, m, {
    policy: opts.policy,
    ...(opts.protect ? { protect: opts.protect } : {}),
    ...(opts.scope ? { scope: opts.scope } : {}),
  });
  const diffFile = path.join(runDir, 'changes.diff');
  await fs.writeFile(diffFile, await reviewDiff(repoDir, runDir, m, set));
  const base = { filesChanged, diffFile, refused: set.refused, skipped: set.skipped, saved };
  if (!apply || set.refused.length > 0) return { ...base, applied: false };
  try {
    await applyChangeSet(repoDir, set);
  } catch (e) {
    return { ...base, applied: false, applyError: (e as Error).message };
  }
  return { ...base, applied: true };
}

/**
 * A git diff of the repository as it is against the saved files, for people to read: made on the
 * host from verified bytes, so it shows what would be written, not what the sandbox claimed.
 */
async function reviewDiff(repoDir: string, runDir: string, m: WorkspaceManifest, set: ChangeSet): Promise<string> {
  const out: string[] = [];
  for (const r of set.refused) out.push(`# refused ${r.path}: ${r.reason}\n`);
  for (const s of set.skipped) out.push(`# skipped ${s.path} (${s.size} bytes): ${s.reason}\n`);
  const root = await fs.realpath(repoDir);
  for (const f of m.files) {
    if (f.kind !== 'file' || set.refused.some((r) => r.path === f.path)) continue;
    if (f.size > DIFF_MAX_BYTES) {
      out.push(`# ${f.path}: ${f.size} bytes, sha256 ${f.sha256} (too large to show)\n`);
      continue;
    }
    const host = path.join(root, f.path);
    const before = (await fs.lstat(host).catch(() => undefined))?.isFile() ? host : '/dev/null';
    out.push(await diffPair(before, path.join(runDir, 'workspace/blobs', f.sha256), f.path));
  }
  for (const p of set.deletes) out.push(await diffPair(path.join(root, p), '/dev/null', p));
  return out.join('');
}

async function diffPair(a: string, b: string, rel: string): Promise<string> {
  const r = await run(
    'git',
    [...SAFE_GIT, 'diff', '--no-index', '--binary', '--no-color', '--no-ext-diff', '--no-textconv', '--', a, b],
    {
      env: { ...process.env, ...SAFE_GIT_ENV },
      maxBuffer: 64 * 1024 * 1024,
    },
  ).catch((e: { code?: number; stdout?: string; message: string }) =>
    e.code === 1 ? { stdout: e.stdout ?? '' } : { stdout: `# ${rel}: no diff (${e.message.slice(0, 200)})\n` },
  );
  // git names the two files by their paths on this machine; the review shows the repository's path.
  const header = (p: string, side: string) => (p === '/dev/null' ? '/dev/null' : `${side}/${rel}`);
  let inHeader = false;
  return r.stdout
    .split('\n')
    .map((line) => {
      if (line.startsWith('diff --git ')) {
        inHeader = true;
        return `diff --git a/${rel} b/${rel}`;
      }
      if (inHeader && line.startsWith('--- ')) return `--- ${header(a, 'a')}`;
      if (inHeader && line.startsWith('+++ ')) return `+++ ${header(b, 'b')}`;
      if (line.startsWith('@@') || line.startsWith('GIT binary patch') || line.startsWith('Binary files'))
        inHeader = false;
      return line;
    })
    .join('\n');
}
