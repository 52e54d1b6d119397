import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import type { EventEnvelope } from '@gatehouse/shared';
import { LogKey } from '../events/key';
import { EVENTS_FILE, resolveStateDir, runDir as runDirOf } from '../events/paths';
import { scanLog } from '../events/scan';
import { docker, statusOf } from './docker';
import { LABEL, ownerIsDead } from './labels';
import { removeNetwork } from './network';
import { readClaim, removeClaim } from './pool-claims';
import { writeSalvageRecord } from './salvage-record';
import { readManifest, saveWorkspace, type WorkspaceManifest } from './workspace-save';
import { stopCommandUser } from './workspace-scan';

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
  /**
   * Only sandboxes of runs kept in `stateDir` (what a run reaps on its own as it starts and ends).
   * Another state directory may be another installation with another log key: its orphans are
   * saved by its own runs, or by `gatehouse sandbox reap`, where the record's MAC verifies.
   */
  ownStateDirOnly?: boolean;
  /**
   * The run is being continued from `stateDir` (resume): its workspace is saved there, whatever
   * state directory the sandbox's label names. A queue worker taking over a run from a dead one on
   * the same engine continues it in its own state directory, while the label names the dead one's.
   */
  saveIntoStateDir?: boolean;
}

/**
 * Removes sandboxes, egress proxies and run networks whose owning orchestrator process is gone (it crashed or was
 * killed before cleaning up), after saving each sandbox's workspace beside its run's log. Objects
 * owned by a live process, or by another host, are left alone. `everything` also removes live
 * ones: for `gatehouse sandbox reap --all`.
 */
export async function reapOrphans(
  d: Docker = docker(),
  everything = false,
  opts: ReapOptions = {},
): Promise<ReapReport> {
  const report: ReapReport = { containers: [], networks: [], volumes: [], salvaged: [], unsaved: [] };
  const stateDir = opts.stateDir ?? resolveStateDir();
  // Not filtered by run label: a pooled sandbox has none (its claim record on the host names the run).
  const containers = await d.listContainers({ all: true, filters: { label: [`${LABEL.role}=sandbox`] } });
  const reapedSandboxes = new Set<string>();
  for (const c of containers) {
    const own = c.Labels[LABEL.state];
    if (opts.ownStateDirOnly && (!own || path.resolve(own) !== path.resolve(stateDir))) continue;
    const pooled = c.Labels[LABEL.pool] !== undefined && c.Labels[LABEL.run] === undefined;
    const sandboxId = c.Labels[LABEL.sandbox] ?? '';
    const claim = pooled && own && path.isAbsolute(own) ? readClaim(own, sandboxId) : undefined;
    // A claimed pooled sandbox belongs to the process driving its run (a worker's pool hands its
    // sandboxes to run children): that one's death makes it an orphan, not the pool's owner's.
    if (!everything && !ownerIsDead(claim?.owner ?? c.Labels[LABEL.owner])) continue;
    const runId = c.Labels[LABEL.run] ?? claim?.runId ?? '';
    if (opts.runId && runId !== opts.runId) continue;
    if (pooled && !claim) {
      // Never claimed: no run, nothing in it to save.
    } else if (c.Labels[LABEL.salvage] === 'never') {
      report.unsaved.push({ runId, reason: 'a setup sandbox: its files may hold setup secrets, so it is not saved' });
    } else {
      try {
        // The label names the run's own state directory; the caller's is the fallback for older sandboxes.
        const into = !opts.saveIntoStateDir && own && path.isAbsolute(own) ? own : stateDir;
        const saved = await salvage(d.getContainer(c.Id), c.State, into, runId);
        if ('file' in saved) report.salvaged.push({ runId, file: saved.file });
        else if (saved.reason) report.unsaved.push({ runId, reason: saved.reason });
      } catch (e) {
        report.unsaved.push({ runId, reason: `saving its workspace failed: ${(e as Error).message.slice(0, 300)}` });
      }
    }
    try {
      await d.getContainer(c.Id).remove({ force: true, v: true });
      report.containers.push(c.Names[0]?.replace(/^\//, '') ?? c.Id);
      reapedSandboxes.add(sandboxId);
    } catch (e) {
      if (statusOf(e) !== 404 && statusOf(e) !== 409) throw e;
    }
    if (claim && own) removeClaim(own, sandboxId);
  }
  // A run's egress proxies go with it: there is nothing in them to save.
  const proxies = await d.listContainers({
    all: true,
    filters: { label: [`${LABEL.role}=egress-proxy`, ...(opts.runId ? [`${LABEL.run}=${opts.runId}`] : [])] },
  });
  for (const c of proxies) {
    if (!everything && !ownerIsDead(c.Labels[LABEL.owner])) continue;
    try {
      await d.getContainer(c.Id).remove({ force: true, v: true });
      report.containers.push(c.Names[0]?.replace(/^\//, '') ?? c.Id);
    } catch (e) {
      if (statusOf(e) !== 404 && statusOf(e) !== 409) throw e;
    }
  }
  // Network holders go with their networks (network.ts removeNetwork); one whose network went
  // another way (removed by hand, an engine that lost it) is swept once its owner is dead.
  if (!opts.runId) {
    const holders = await d.listContainers({ all: true, filters: { label: [`${LABEL.role}=network-holder`] } });
    for (const c of holders) {
      if (!everything && !ownerIsDead(c.Labels[LABEL.owner])) continue;
      await d
        .getContainer(c.Id)
        .remove({ force: true })
        .then(() => report.containers.push(c.Names[0]?.replace(/^\//, '') ?? c.Id))
        .catch(() => undefined);
    }
  }
  const networks = await d.listNetworks({ filters: { label: [`${LABEL.role}=run-network`] } });
  for (const n of networks) {
    const ofReaped = reapedSandboxes.has(n.Labels?.[LABEL.sandbox] ?? '');
    if (!everything && !ofReaped && !ownerIsDead(n.Labels?.[LABEL.owner])) continue;
    // A run's own: by its label, or (a pooled sandbox's network) by the sandbox reaped above.
    const ofRun = n.Labels?.[LABEL.run] === opts.runId || ofReaped;
    if (opts.runId && !ofRun) continue;
    await removeNetwork(d, n.Id);
    report.networks.push(n.Name);
  }
  if (opts.runId) return report;
  // Anonymous volumes go with their container (v: true); this catches any left dangling.
  const volumes = await d.listVolumes({ filters: { label: [LABEL.sandbox], dangling: ['true'] } });
  for (const v of volumes.Volumes ?? []) {
    await d
      .getVolume(v.Name)
      .remove()
      .catch(() => undefined);
    report.volumes.push(v.Name);
  }
  return report;
}

/**
 * Saves an orphan's workspace as `workspace/salvage-SEQ.json` in its run's folder, SEQ being the
 * last event of the log then, with a record MAC'd with the installation key that vouches for it
 * (salvage-record.ts): resume restores it only when that verifies and nothing newer was recorded
 * since. The daemon is not asked (a new process cannot speak for a dead one, and a daemon may lie):
 * the command user's processes are stopped, git runs as root beside it, content comes through the
 * archive API.
 */
async function salvage(
  container: Docker.Container,
  state: string,
  stateDir: string,
  runId: string,
): Promise<{ file: string } | { reason?: string }> {
  let dir: string;
  try {
    dir = runDirOf(stateDir, runId);
  } catch {
    return { reason: `its run id ${JSON.stringify(runId)} is not valid` };
  }
  const eventsFile = path.join(dir, EVENTS_FILE);
  if (!existsSync(eventsFile)) return { reason: `run ${runId} has no log in ${stateDir}; its workspace was not saved` };
  if (state !== 'running') return { reason: `the sandbox had stopped (${state}); its workspace could not be listed` };
  let key: LogKey;
  try {
    key = LogKey.load({ stateDir });
  } catch (e) {
    return { reason: `its workspace was not saved: nothing could vouch for it (${(e as Error).message})` };
  }
  // Only events whose chain and MAC verify: a line appended by someone else names nothing.
  const events = scanLog(readFileSync(eventsFile), { runId, keepEvents: true, key }).events;
  const last = events.at(-1);
  if (!last) return { reason: `run ${runId} has no event that verifies; its workspace was not saved` };
  await stopCommandUser(container);
  const previous = await lastCheckpoint(dir, events);
  const saved = await saveWorkspace(container, dir, `salvage-${last.seq}`, previous ? { previous } : {});
  await writeSalvageRecord(key, dir, {
    runId,
    firstHash: events[0]!.hash,
    afterSeq: last.seq,
    afterHash: last.hash,
    manifest: saved.file,
    manifestSha256: saved.sha256,
  });
  return { file: saved.file };
}

/**
 * The last checkpoint the log records, checked against the hash in its event: its unchanged files
 * are not read again. Any other manifest in the folder (a planted one) is not a base: its entries
 * would be carried into the salvage, which the record then vouches for.
 */
async function lastCheckpoint(dir: string, events: readonly EventEnvelope[]): Promise<WorkspaceManifest | undefined> {
  const e = events.findLast((x) => x.type === 'workspace.checkpoint');
  if (!e) return undefined;
  const c = e.data;
  // A checkpoint that does not match its event is not used: every file is read again instead.
  return readManifest(dir, c.manifest, c.manifestSha256).catch(() => undefined);
}
