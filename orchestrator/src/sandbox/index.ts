export { SandboxDriver, type DriverOptions, type CreateSandboxOptions } from './driver';
export { Sandbox, type InvokeOptions, type SandboxInfo } from './sandbox';
export { SandboxError, SandboxLostError, ProtocolError, DockerUnavailableError } from './errors';
export { ensureImages, expectedImageTags, BaseChoice, type Images } from './images';
export { pruneSuperseded, IMAGE_SOURCE_LABEL } from './image-prune';
export { reapOrphans, type ReapReport } from './reaper';
export { ensureNatsServer, connectOrchestrator, NATS_CONTAINER, type NatsEndpoint } from './nats-server';
export { newIdentity, serverConfig, sandboxCreds } from './nats-auth';
export { DEFAULT_LIMITS, WORKSPACE, SANDBOX_UID, type SandboxLimits } from './container';
export { LABEL } from './labels';
export { docker, assertDockerReachable } from './docker';
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
export { copyRepository, type CopyOptions, type CopyReport, type ProtectList } from './copy-in';
export { listRepository, type SkippedPath, type CopyListOptions } from './copy-list';
