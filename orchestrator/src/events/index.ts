export { eventHash, sealEvent, GENESIS_HASH, type UnsealedEvent } from './hash';
export { Redactor, SECRET_NAME, EXPLICIT_SECRET_VARS, MIN_ENV_SECRET, MIN_LITERAL_SECRET, type Secret } from './redact';
export {
  ArtifactStore,
  ArtifactError,
  ARTIFACT_REF,
  DEFAULT_READ_LIMIT,
  type ArtifactInfo,
  type ArtifactPage,
} from './artifacts';
export { EventDataError, EventLogCorruptError, LogSchemaTooNewError } from './log-errors';
export { RunLog, type RunLogOptions, type AppendOptions, type Recovered } from './store';
export { verifyLog, type VerifyResult, type BadEvent } from './verify';
export { listRuns, type RunSummary } from './runs';
export {
  resolveStateDir,
  runDir,
  eventsFile,
  assertRunId,
  InvalidRunIdError,
  EVENTS_FILE,
  ARTIFACTS_DIR,
} from './paths';
export { explainRun, type ActionAccount } from './explain';
export { LogKey, LogKeyError } from './key';
export type { LogReplica, ReplicaFlushPoint } from './replica-port';
