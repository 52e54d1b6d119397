import type Docker from 'dockerode';
import { docker, statusOf } from './docker';
import { LABEL, ownerIsDead } from './labels';
import { removeNetwork } from './network';

export interface ReapReport {
  containers: string[];
  networks: string[];
  volumes: string[];
}

/**
 * Removes sandboxes and run networks whose owning orchestrator process is gone (it crashed or was
 * killed before cleaning up). Objects owned by a live process, or by another host, are left alone.
 * `everything` also removes live ones: for `gatehouse sandbox reap --all`.
 */
export async function reapOrphans(d: Docker = docker(), everything = false): Promise<ReapReport> {
  const report: ReapReport = { containers: [], networks: [], volumes: [] };
  const containers = await d.listContainers({ all: true, filters: { label: [`${LABEL.role}=sandbox`] } });
  for (const c of containers) {
    if (!everything && !ownerIsDead(c.Labels[LABEL.owner])) continue;
    try {
      await d.getContainer(c.Id).remove({ force: true, v: true });
      report.containers.push(c.Names[0]?.replace(/^\//, '') ?? c.Id);
    } catch (e) {
      if (statusOf(e) !== 404 && statusOf(e) !== 409) throw e;
    }
  }
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
