import type Docker from 'dockerode';
import { LABEL, labels } from './labels';

/** The user every command runs as; it owns the workspace. */
export const SANDBOX_UID = 10001;
/** The daemon's user: root in the container, holding only DAEMON_CAPABILITIES. */
export const DAEMON_UID = 0;
export const WORKSPACE = '/workspace';
export const STATE_DIR = '/var/gatehouse';
/** A pooled sandbox's one-time user, or over ssh:// the run's identity itself (run-identity.ts). */
export const IDENTITY_FILE = `${STATE_DIR}/identity.json`;
/** Workspace paths the policy denies writing, made root-owned by the daemon before anything runs. */
export const PROTECT_FILE = `${STATE_DIR}/protect.json`;

/**
 * What the daemon keeps of root's power (docs/decisions/0001-sandbox-process-separation.md): to start
 * commands as SANDBOX_UID (SETUID, SETGID), to end every process of that user after a call (KILL),
 * and to manage workspace files that user owns (CHOWN, DAC_OVERRIDE, FOWNER). A process it starts
 * under another uid keeps none of them, and no-new-privileges stops any way back.
 */
export const DAEMON_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'SETUID', 'SETGID', 'KILL'];

export interface SandboxLimits {
  memoryBytes: number;
  /** CPUs, fractional allowed. */
  cpus: number;
  pids: number;
  /** Size of the /tmp scratch tmpfs (also of each tmpfs over a VOLUME the image declares). */
  tmpBytes: number;
  /**
   * Size of /workspace. Unset: a plain volume on the host's disk, unlimited. Set: the workspace is
   * a tmpfs-backed volume of that size (overlay2 on ext4 has no per-container quota): a write past
   * it fails with ENOSPC, and what the workspace holds is memory, charged as docs/sandbox.md says.
   */
  diskBytes?: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  memoryBytes: 1024 * 1024 * 1024,
  cpus: 1,
  pids: 256,
  tmpBytes: 256 * 1024 * 1024,
};

export interface ContainerSpec {
  image: string;
  /** The run, when known at creation (a cold start); a pooled sandbox gets it at claim (warm-pool.ts). */
  runId?: string;
  sandboxId: string;
  /** A warm pool's sandbox: the pool key it belongs to (a label), bound to a run only when claimed. */
  pool?: string;
  /** An OCI runtime other than Docker's default (crun when installed: runtime.ts). */
  runtime?: string;
  /**
   * Bind over the container's stdin (bind-stdin.ts: a cold start, whose starter attaches to it)
   * instead of through the identity and protect files (a pooled sandbox).
   */
  bindOverStdin?: boolean;
  /** How long the daemon waits for its identity (a pooled one waits for its claim). */
  identityWaitMs?: number;
  network: string;
  /**
   * A container holding the run network's namespace (network-holder.ts): the sandbox joins it
   * instead of being attached to `network` itself.
   */
  networkHolder?: string;
  natsUrl: string;
  heartbeatMs: number;
  limits: SandboxLimits;
  /** The run's state directory on the host (a label for the reaper, which saves orphans' workspaces there). */
  stateDir?: string;
  /** false: the reaper never saves this sandbox's workspace (a label it reads). */
  salvage?: boolean;
  /** VOLUMEs the image declares (a toolchain's own): each gets a bounded tmpfs instead of a disk volume. */
  imageVolumes?: string[];
}

/**
 * The hardened container: commands as an unprivileged user with no capabilities, the daemon as a
 * different user holding six, no privilege gain, read-only root with a tmpfs scratch,
 * memory/CPU/pids limits, no Docker socket (nothing is mounted but two anonymous volumes),
 * attached only to the run's internal network. The workspace and the daemon's state are volumes
 * because Docker's archive API cannot write into tmpfs mounts of a read-only container.
 */
export function sandboxContainerOptions(spec: ContainerSpec): Docker.ContainerCreateOptions {
  const run: Record<string, string> = spec.runId ? { [LABEL.run]: spec.runId } : {};
  const volumeLabels = { ...run, [LABEL.sandbox]: spec.sandboxId };
  return {
    name: `gatehouse-sbx-${spec.sandboxId}`,
    Image: spec.image,
    User: `${DAEMON_UID}:${DAEMON_UID}`,
    WorkingDir: WORKSPACE,
    Env: [
      `GATEHOUSE_NATS_URL=${spec.natsUrl}`,
      // No run, sandbox or credentials here: they arrive when the sandbox is bound (on stdin, or for a
      // pooled sandbox over NATS at its claim: run-identity.ts).
      `GATEHOUSE_WORKSPACE=${WORKSPACE}`,
      `GATEHOUSE_STATE_DIR=${STATE_DIR}`,
      `GATEHOUSE_IDENTITY_FILE=${IDENTITY_FILE}`,
      `GATEHOUSE_PROTECT_FILE=${PROTECT_FILE}`,
      // Always set, so that a toolchain image's ENV cannot choose it.
      `GATEHOUSE_BIND_VIA=${spec.bindOverStdin ? 'stdin' : 'file'}`,
      ...(spec.identityWaitMs === undefined ? [] : [`GATEHOUSE_IDENTITY_WAIT_MS=${spec.identityWaitMs}`]),
      `GATEHOUSE_COMMAND_UID=${SANDBOX_UID}`,
      `GATEHOUSE_HEARTBEAT_MS=${spec.heartbeatMs}`,
      // The toolchain image's variables are the daemon's too (ENV is inherited): none may change
      // how the bundled node loads or what it runs. Commands get the image's own (image-env.ts).
      'NODE_OPTIONS=',
      'NODE_PATH=',
      'LD_PRELOAD=',
      'LD_LIBRARY_PATH=',
      'LD_AUDIT=',
    ],
    // Stdin stays closed unless the binding comes that way; it closes for good when the
    // orchestrator's one attach ends (StdinOnce), so nobody can write to it after.
    ...(spec.bindOverStdin ? { OpenStdin: true, StdinOnce: true, AttachStdin: true } : {}),
    Labels: labels('sandbox', {
      ...run,
      [LABEL.sandbox]: spec.sandboxId,
      ...(spec.pool ? { [LABEL.pool]: spec.pool } : {}),
      ...(spec.stateDir ? { [LABEL.state]: spec.stateDir } : {}),
      ...(spec.salvage === false ? { [LABEL.salvage]: 'never' } : {}),
    }),
    ...(spec.networkHolder ? {} : { NetworkingConfig: { EndpointsConfig: { [spec.network]: {} } } }),
    HostConfig: {
      ...(spec.runtime ? { Runtime: spec.runtime } : {}),
      // Docker's embedded resolver would forward unknown names upstream from inside the sandbox;
      // pointing it at the sandbox's own loopback makes lookups fail at once and send nothing out.
      // A holder's namespace comes with its resolver settings, which are the same (network-holder.ts).
      ...(spec.networkHolder
        ? { NetworkMode: `container:${spec.networkHolder}` }
        : { NetworkMode: spec.network, Dns: ['127.0.0.1'], DnsOptions: ['timeout:1', 'attempts:1'] }),
      CapDrop: ['ALL'],
      CapAdd: DAEMON_CAPABILITIES,
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      ReadonlyRootfs: true,
      Tmpfs: {
        ...Object.fromEntries(
          (spec.imageVolumes ?? [])
            .filter((v) => ![WORKSPACE, STATE_DIR, '/tmp'].includes(v))
            .map((v) => [v, `rw,nosuid,nodev,size=${spec.limits.tmpBytes},mode=1777`]),
        ),
        '/tmp': `rw,nosuid,nodev,size=${spec.limits.tmpBytes},mode=1777`,
      },
      Mounts: [
        {
          Type: 'volume',
          Source: '',
          Target: WORKSPACE,
          VolumeOptions: {
            NoCopy: false,
            Labels: volumeLabels,
            DriverConfig: { Name: 'local', Options: workspaceVolumeOptions(spec.limits) },
          },
        },
        {
          Type: 'volume',
          Source: '',
          Target: STATE_DIR,
          VolumeOptions: { NoCopy: false, Labels: volumeLabels, DriverConfig: { Name: 'local', Options: {} } },
        },
      ],
      Memory: memoryCgroupBytes(spec.limits),
      MemorySwap: memoryCgroupBytes(spec.limits),
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

/**
 * The workspace volume's driver options: with a disk limit, a tmpfs of that size (mounted by
 * Docker on the volume's folder, so the archive API still writes into it), owned by the command
 * user as the image's /workspace is.
 */
export function workspaceVolumeOptions(limits: SandboxLimits): Record<string, string> {
  if (limits.diskBytes === undefined) return {};
  return {
    type: 'tmpfs',
    device: 'tmpfs',
    o: `size=${limits.diskBytes},uid=${SANDBOX_UID},gid=${SANDBOX_UID},mode=0755,nosuid,nodev`,
  };
}

/**
 * The memory cgroup's limit. A tmpfs workspace's pages are charged to the cgroup of the process
 * that writes them (measured: 100 MB written into the workspace raised the container's usage by
 * 100 MB, and filling it past the memory limit OOM-killed the writer, with the pages still held).
 * So the cgroup gets memoryBytes + diskBytes: a full workspace never leaves the processes less than
 * memoryBytes, and the workspace itself stops at diskBytes (ENOSPC).
 */
export function memoryCgroupBytes(limits: SandboxLimits): number {
  return limits.memoryBytes + (limits.diskBytes ?? 0);
}
