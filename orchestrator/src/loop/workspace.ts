import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Sandbox } from '../sandbox/index';

/** What a snapshot needs of a sandbox: its changes and file copies (the in-memory test sandbox has them too). */
export type WorkspaceFiles = Pick<Sandbox, 'changes' | 'exportFiles' | 'importFiles' | 'removeFiles'>;

export interface WorkspaceSnapshot {
  /** Folder under the run's directory holding the changed files (null: nothing changed). */
  dir: string | null;
  files: string[];
  deleted: string[];
}

/**
 * Saves what the run changed in its workspace beside the log — the changed files themselves, byte
 * for byte, and the list of deleted ones — so a later sandbox can be put back in the same state.
 */
export async function snapshotWorkspace(
  sandbox: WorkspaceFiles,
  runDir: string,
  name: string,
): Promise<WorkspaceSnapshot> {
  const changes = await sandbox.changes();
  const deleted = changes.files.filter((f) => f.status === 'deleted').map((f) => f.path);
  const files = changes.files.filter((f) => f.status !== 'deleted').map((f) => f.path);
  if (files.length === 0) return { dir: null, files, deleted };
  const rel = path.join('workspace', name);
  const dir = path.join(runDir, rel);
  mkdirSync(dir, { recursive: true });
  await sandbox.exportFiles(files, dir);
  return { dir: rel, files, deleted };
}

/** Puts a snapshot into a fresh sandbox made from the same repository. */
export async function restoreWorkspace(
  sandbox: WorkspaceFiles,
  runDir: string,
  snap: WorkspaceSnapshot,
): Promise<void> {
  if (snap.dir) await sandbox.importFiles(path.join(runDir, snap.dir), snap.files);
  await sandbox.removeFiles(snap.deleted);
}
