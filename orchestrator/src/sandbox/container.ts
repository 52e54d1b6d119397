import type Docker from 'dockerode';
import { LABEL, labels } from './labels';

export const SANDBOX_UID = 10001;
export const WORKSPACE = '/workspace';
export const STATE_DIR = '/var/gatehouse';
export const CREDS_FILE = `${STATE_DIR}/nats.creds`;

export interface SandboxLimits {
  memoryBytes: number;
  /** CPUs, fractional allowed. */
  cpus: number;
  pids: number;
  /** Size of the /tmp scratch tmpfs. */
  tmpBytes: number;
}

export const DEFAULT_LIMITS: SandboxLimits = { memoryBytes: 1024 * 1024 * 1024, cpus: 1, pids: 256, tmpBytes: 256 * 1024 * 1024 };

export interface ContainerSpec {
  image: string;
  runId: string;
  sandboxId: string;
  network: string;
  natsUrl: string;
  heartbeatMs: number;
  limits: SandboxLimits;
}

/**
 * The hardened container: non-root, no capabilities, no privilege gain, read-only root with a tmpfs
 * scratch, memory/CPU/pids limits, no Docker socket (nothing is mounted but two anonymous volumes),
 * attached only to the run's internal network. The workspace and the daemon's state are volumes
 * because Docker's archive API cannot write into tmpfs mounts of a read-only container.
 */
export function sandboxContainerOptions(spec: ContainerSpec): Docker.ContainerCreateOptions {
  const volumeLabels = { [LABEL.run]: spec.runId, [LABEL.sandbox]: spec.sandboxId };
  return {
    name: `gatehouse-sbx-${spec.sandboxId}`,
    Image: spec.image,
    User: `${SANDBOX_UID}:${SANDBOX_UID}`,
    WorkingDir: WORKSPACE,
    Env: [
      `GATEHOUSE_NATS_URL=${spec.natsUrl}`,
      `GATEHOUSE_RUN_ID=${spec.runId}`,
      `GATEHOUSE_SANDBOX_ID=${spec.sandboxId}`,
      `GATEHOUSE_WORKSPACE=${WORKSPACE}`,
      `GATEHOUSE_STATE_DIR=${STATE_DIR}`,
      `GATEHOUSE_NATS_CREDS_FILE=${CREDS_FILE}`,
      `GATEHOUSE_HEARTBEAT_MS=${spec.heartbeatMs}`,
    ],
    Labels: labels('sandbox', { [LABEL.run]: spec.runId, [LABEL.sandbox]: spec.sandboxId }),
    NetworkingConfig: { EndpointsConfig: { [spec.network]: {} } },
    HostConfig: {
      NetworkMode: spec.network,
      // Docker's embedded resolver would forward unknown names upstream from inside the sandbox;
      // pointing it at the sandbox's own loopback makes lookups fail at once and send nothing out.
      Dns: ['127.0.0.1'],
      DnsOptions: ['timeout:1', 'attempts:1'],
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${spec.limits.tmpBytes},mode=1777` },
      Mounts: [
        { Type: 'volume', Source: '', Target: WORKSPACE, VolumeOptions: { NoCopy: false, Labels: volumeLabels, DriverConfig: { Name: 'local', Options: {} } } },
        { Type: 'volume', Source: '', Target: STATE_DIR, VolumeOptions: { NoCopy: false, Labels: volumeLabels, DriverConfig: { Name: 'local', Options: {} } } },
      ],
      Memory: spec.limits.memoryBytes,
      MemorySwap: spec.limits.memoryBytes,
      NanoCpus: Math.round(spec.limits.cpus * 1e9),
      PidsLimit: spec.limits.pids,
      Ulimits: [{ Name: 'nofile', Soft: 4096, Hard: 4096 }],
      // tini as PID 1 reaps zombies, which would otherwise count against the pids limit.
      Init: true,
      IpcMode: 'private',
      AutoRemove: false,
    },
  };
}
