import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import { EVENTS_FILE, resolveStateDir, runDir as runDirOf } from '../events/paths';
import { docker, statusOf } from './docker';
import { LABEL, ownerIsDead } from './labels';
import { removeNetwork } from './network';
import { saveWorkspace, WORKSPACE_STATE_DIR, WorkspaceManifest } from './workspace-save';

export interface ReapReport {
  containers: string[];
  networks: string[];
  volumes: string[];
  /** Orphans whose workspace was saved into their run's folder first (resume restores it). */
  salvaged: Array<{ runId: string; file: string }>;
  /** Orphans removed without their workspace saved, and why. */
  unsaved: Array<{ runId: string; reason: string }>;
}

export interface ReapOptions {
  /** Where runs live (default: as the CLI resolves it): an orphan's workspace is saved into its run's folder there. */
  stateDir?: string;
  /** Only this run's sandboxes (resume salvaging its own). */
  runId?: string;
}

/**
 * Removes sandboxes and run networks whose owning orchestrator process is gone (it crashed or was
 * killed before cleaning up), after saving each sandbox's workspace beside its run's log. Objects
 * owned by a live process, or by another host, are left alone. `everything` also removes live
 * ones: for `gatehouse sandbox reap --all`.
 */
export async function reapOrphans(d: Docker = docker(), everything = false, opts: ReapOptions = {}): Promise<ReapReport> {
  const report: ReapReport = { containers: [], networks: [], volumes: [], salvaged: [], unsaved: [] };
  const stateDir = opts.stateDir ?? resolveStateDir();
  const label = [`${LABEL.role}=sandbox`, ...(opts.runId ? [`${LABEL.run}=${opts.runId}`] : [])];
  const containers = await d.listContainers({ all: true, filters: { label } });
  for (const c of containers) {
    if (!everything && !ownerIsDead(c.Labels[LABEL.owner])) continue;
    const runId = c.Labels[LABEL.run] ?? '';
    try {
      // The label names the run's own state directory; the caller's is the fallback for older sandboxes.
      const own = c.Labels[LABEL.state];
      const saved = await salvage(d.getContainer(c.Id), c.State, own && path.isAbsolute(own) ? own : stateDir, runId);
      if ('file' in saved) report.salvaged.push({ runId, file: saved.file });
      else if (saved.reason) report.unsaved.push({ runId, reason: saved.reason });
    } catch (e) {
      report.unsaved.push({ runId, reason: `saving its workspace failed: ${(e as Error).message.slice(0, 300)}` });
    }
    try {
      await d.getContainer(c.Id).remove({ force: true, v: true });
      report.containers.push(c.Names[0]?.replace(/^\//, '') ?? c.Id);
    } catch (e) {
      if (statusOf(e) !== 404 && statusOf(e) !== 409) throw e;
    }
  }
  if (opts.runId) return report;
  const networks = await d.listNetworks({ filters: { label: [`${LABEL.role}=run-network`] } });
  for (const n of networks) {
    if (!everything && !ownerIsDead(n.Labels?.[LABEL.owner])) continue;
    await removeNetwork(d, n.Id);
    report.networks.push(n.Name);
  }
  // Anonymous volumes go with their container (v: true); this catches any left dangling.
  const volumes = await d.listVolumes({ filters: { label: [LABEL.sandbox], dangling: ['true'] } });
  for (const v of volumes.Volumes ?? []) {
    await d.getVolume(v.Name).remove().catch(() => undefined);
    report.volumes.push(v.Name);
  }
  return report;
}

/**
 * Saves an orphan's workspace as `workspace/salvage-SEQ.json` in its run's folder, SEQ being the
 * last event of the log then: resume restores it when nothing newer was recorded since. The
 * daemon is not asked (a new process cannot speak for a dead one, and a daemon may lie): git runs
 * as root beside it, content comes through the archive API.
 */
async function salvage(container: Docker.Container, state: string, stateDir: string, runId: string): Promise<{ file: string } | { reason?: string }> {
  let dir: string;
  try {
    dir = runDirOf(stateDir, runId);
  } catch {
    return { reason: `its run id ${JSON.stringify(runId)} is not valid` };
  }
  const events = path.join(dir, EVENTS_FILE);
  if (!existsSync(events)) return { reason: `run ${runId} has no log in ${stateDir}; its workspace was not saved` };
  if (state !== 'running') return { reason: `the sandbox had stopped (${state}); its workspace could not be listed` };
  const previous = lastCheckpoint(dir);
  const saved = await saveWorkspace(container, dir, `salvage-${lastSeq(events)}`, previous ? { previous } : {});
  return { file: saved.file };
}

function lastSeq(file: string): number {
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      const seq = (JSON.parse(lines[i]!) as { seq?: unknown }).seq;
      if (typeof seq === 'number') return seq;
    } catch {
      // A torn last line (the crash cut it): the one before is the last event.
    }
  }
  return 0;
}

/** The newest checkpoint the dead process saved: its unchanged files are not read again. */
function lastCheckpoint(dir: string): WorkspaceManifest | undefined {
  const ws = path.join(dir, WORKSPACE_STATE_DIR);
  const names = existsSync(ws) ? readdirSync(ws).filter((n) => /^checkpoint-\d+\.json$/.test(n)) : [];
  const newest = names.sort((a, b) => Number(/\d+/.exec(b)![0]) - Number(/\d+/.exec(a)![0]))[0];
  if (!newest) return undefined;
  try {
    return WorkspaceManifest.parse(JSON.parse(readFileSync(path.join(ws, newest), 'utf8')));
  } catch {
    return undefined;
  }
}
