export { SandboxDriver, type DriverOptions, type CreateSandboxOptions, type SandboxBackend } from './driver';
export { Sandbox, type InvokeOptions, type SandboxInfo } from './sandbox';
export { SandboxError, SandboxLostError, ProtocolError, DockerUnavailableError } from './errors';
export {
  ensureImages,
  ensureBuiltImage,
  expectedImageTags,
  BaseChoice,
  PRESETS,
  type Images,
  type PresetName,
} from './images';
export { ensureRuntimeImage, type RuntimeOptions } from './runtime-image';
export { ensureRunImage, RUN_IMAGE_LABEL } from './run-image';
export { resolveToolchainImage, PRESET_PREFIX } from './toolchain';
export { limitsFromConfig, type LimitsConfig } from './limits';
export { pruneSuperseded, IMAGE_SOURCE_LABEL } from './image-prune';
export { reapOrphans, type ReapReport } from './reaper';
export { WarmPool, type WarmPoolOptions } from './warm-pool';
export { ensureNatsServer, connectOrchestrator, NATS_CONTAINER, type NatsEndpoint } from './nats-server';
export { newIdentity, poolBootstrapCreds, serverConfig, sandboxCreds } from './nats-auth';
export { DEFAULT_LIMITS, WORKSPACE, SANDBOX_UID, type SandboxLimits } from './container';
export { LABEL } from './labels';
export { docker, dockerHost, useDockerHost, assertDockerReachable, imageExists } from './docker';
export { parseDockerHost, dockerHostFromEnv, publishAddress, type DockerHost } from './docker-host';
export { shellQuote } from './shell-quote';
export { scanWorkspace, type ScannedChange } from './workspace-scan';
export { readEntry, statPath, workspacePath, type WorkspaceEntry } from './workspace-io';
export {
  saveWorkspace,
  loadWorkspace,
  restoreSaved,
  SavedWorkspaceError,
  WorkspaceManifest,
  DEFAULT_MAX_FILE_BYTES,
  type SavedWorkspace,
} from './workspace-save';
export {
  startEgressProxy,
  proxyEnv,
  type EgressProxy,
  type EgressProxyOptions,
  type EgressDecision,
} from './egress-proxy';
export { ensureEgressNetwork, egressNetworkGateway, EGRESS_NETWORK } from './egress-network';
export { EGRESS_ALIAS, EGRESS_PORT } from './egress-container';
export { parseEgressLine } from './egress-log';
export { imageFromWorkspace, type WorkspaceImageOptions, type WorkspaceImageReport } from './workspace-image';
export { copyRepository, type CopyOptions, type CopyReport, type ProtectList } from './copy-in';
export { listRepository, type SkippedPath, type CopyListOptions } from './copy-list';
export { POOL_SOCKET_ENV, remoteClaimer, servePool, type PoolServer } from './pool-link';
export type { Claimed, Claimer, ClaimRequest } from './pool-claim';
