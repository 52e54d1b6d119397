import { readFileSync } from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import type { Engine } from './cli';

/** A Docker client of the engine a worker drives (the main one, or another over TLS). */
export function dockerOf(engine: Engine): Docker {
  if (!engine.dockerHost) return new Docker();
  const url = new URL(engine.dockerHost.replace(/^tcp:/, 'https:'));
  const cert = (name: string) => readFileSync(path.join(engine.certPath ?? '', name));
  return new Docker({
    protocol: 'https',
    host: url.hostname,
    port: Number(url.port),
    ca: cert('ca.pem'),
    cert: cert('cert.pem'),
    key: cert('key.pem'),
  });
}

export interface SandboxContainer {
  engine: string;
  id: string;
  runId: string;
}

/**
 * The running sandboxes of these runs on this engine. Only the soak's own runs: the main engine is
 * shared with everyone else's sandboxes, which the soak must never touch.
 */
export async function sandboxesOf(docker: Docker, engine: string, runs: Set<string>): Promise<SandboxContainer[]> {
  const list = await docker.listContainers({ filters: { label: ['gatehouse.role=sandbox'], status: ['running'] } });
  return list.flatMap((c) => {
    const runId = c.Labels['gatehouse.run'] ?? pooledRun(c.Labels);
    return runId && runs.has(runId) ? [{ engine, id: c.Id, runId }] : [];
  });
}

/**
 * The run a claimed pooled sandbox serves: its labels were set before it had a run, so the claim
 * record in its pool's state directory (a worker's, on this machine) names it.
 */
function pooledRun(labels: Record<string, string>): string | undefined {
  const state = labels['gatehouse.state'];
  const sandboxId = labels['gatehouse.sandbox'];
  if (!labels['gatehouse.pool'] || !state || !sandboxId || !/^[A-Za-z0-9_-]+$/.test(sandboxId)) return undefined;
  try {
    const claim = JSON.parse(readFileSync(path.join(state, 'pool-claims', `${sandboxId}.json`), 'utf8')) as unknown;
    const runId = (claim as { runId?: unknown }).runId;
    return typeof runId === 'string' ? runId : undefined;
  } catch {
    return undefined; // not claimed (yet), or not a pool of this machine
  }
}

/** Memory in use (MiB, page cache excluded, as `docker stats` shows it) of one container. */
export async function memoryMiB(docker: Docker, id: string): Promise<number | undefined> {
  try {
    const s = (await docker.getContainer(id).stats({ stream: false })) as {
      memory_stats?: { usage?: number; stats?: Record<string, number> };
    };
    const usage = s.memory_stats?.usage;
    if (usage === undefined) return undefined;
    const cache = s.memory_stats?.stats?.inactive_file ?? s.memory_stats?.stats?.cache ?? 0;
    return Math.round(((usage - cache) / 1024 / 1024) * 10) / 10;
  } catch {
    return undefined;
  }
}
