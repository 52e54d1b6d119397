import { z } from 'zod';
import { Id, Sha256Hex } from '../ids';
import { MAX_OUTPUT_CAP, MAX_TIMEOUT_MS, PROTOCOL_VERSION } from './limits';
import { PrimitiveInputs, PrimitiveName, type PrimitiveInput } from './primitives';
import { SIGNATURE_PATTERN } from './signing';

/** Every message carries the protocol version; a message of another version does not parse. */
const Version = z.literal(PROTOCOL_VERSION);
const Signature = z.string().regex(SIGNATURE_PATTERN, 'an Ed25519 signature in base64');
const Sha256 = Sha256Hex;

/**
 * Proof that the action was approved before it was sent. `actionHash` is the canonical hash of
 * `{name: primitive, input}`; the daemon recomputes it and refuses a mismatch, so an approval
 * for one action can never carry a different one.
 */
export const ApprovalRef = z.strictObject({
  id: z.string().min(1).max(128),
  actionHash: Sha256,
  /** Who decided: a policy rule, a person, or the runtime itself (e.g. exporting the diff). */
  by: z.enum(['policy', 'user', 'ci', 'runtime']),
});
export type ApprovalRef = z.infer<typeof ApprovalRef>;

const InvocationBase = {
  v: Version,
  invocationId: Id,
  intentId: Id,
  runId: Id,
  sandboxId: Id,
  approval: ApprovalRef,
  timeoutMs: z.number().int().positive().max(MAX_TIMEOUT_MS),
  outputCap: z.number().int().positive().max(MAX_OUTPUT_CAP),
  /** Ed25519 over everything else, by the sandbox's invocation key (see signing.ts). */
  signature: Signature,
};

function invocationOf<P extends PrimitiveName>(primitive: P) {
  return z.strictObject({ ...InvocationBase, primitive: z.literal(primitive), input: PrimitiveInputs[primitive] });
}

export const Invocation = z.discriminatedUnion('primitive', [
  invocationOf('read_file'),
  invocationOf('write_file'),
  invocationOf('edit_file'),
  invocationOf('list'),
  invocationOf('glob'),
  invocationOf('grep'),
  invocationOf('exec'),
  invocationOf('changes'),
  invocationOf('resolve'),
  invocationOf('mcp_session'),
  invocationOf('mcp_send'),
]);
export type Invocation = z.infer<typeof Invocation>;
export type InvocationOf<P extends PrimitiveName> = Extract<Invocation, { primitive: P }> & {
  input: PrimitiveInput<P>;
};

export const ResultStatus = z.enum(['ok', 'failed', 'timeout', 'aborted', 'rejected']);
export type ResultStatus = z.infer<typeof ResultStatus>;

/** Why something was refused or failed, in words a model or a person can act on. */
export const ErrorCode = z.enum([
  'invalid_message',
  'approval_missing',
  'approval_mismatch',
  'signature_invalid',
  'wrong_sandbox',
  'path_outside_workspace',
  'invalid_path',
  'not_found',
  'is_directory',
  'not_a_directory',
  'exists',
  'hash_mismatch',
  /** The path resolves elsewhere than when the policy decided on it (a symlink changed meanwhile). */
  'path_changed',
  'old_text_not_found',
  'old_text_not_unique',
  'too_large',
  'binary_file',
  'io_error',
  'result_expired',
  'timeout',
  'cancelled',
  'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ResultError = z.strictObject({
  code: ErrorCode,
  message: z.string().max(4096),
  /** Schema path of a bad field, or the offending workspace path. */
  path: z.string().max(4096).optional(),
});
export type ResultError = z.infer<typeof ResultError>;

export const ListEntry = z.strictObject({
  path: z.string(),
  type: z.enum(['file', 'dir', 'symlink', 'other']),
  size: z.number().int().nonnegative(),
});
export type ListEntry = z.infer<typeof ListEntry>;

export const GrepMatch = z.strictObject({ path: z.string(), line: z.number().int().positive(), text: z.string() });
export type GrepMatch = z.infer<typeof GrepMatch>;

export const ChangedFile = z.strictObject({
  path: z.string(),
  status: z.enum(['added', 'modified', 'deleted', 'renamed', 'type_changed']),
});
export type ChangedFile = z.infer<typeof ChangedFile>;

/**
 * Where one requested path leads: `real` is workspace-relative when inside, absolute when outside,
 * absent when it cannot be resolved (`error` says why, e.g. a symlink loop).
 */
export const PathResolution = z.strictObject({
  path: z.string(),
  real: z.string().optional(),
  exists: z.boolean(),
  outside: z.boolean(),
  /** The path (or one of its ancestors) is a symlink whose target does not exist. */
  dangling: z.boolean().optional(),
  error: z.string().max(1024).optional(),
});
export type PathResolution = z.infer<typeof PathResolution>;

/** What each primitive returns beyond text; absent when the invocation did not run. */
export const ResultData = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('read_file'),
    sha256: Sha256,
    totalBytes: z.number().int().nonnegative(),
    totalLines: z.number().int().nonnegative(),
    startLine: z.number().int().positive(),
    endLine: z.number().int().nonnegative(),
  }),
  z.strictObject({ kind: z.literal('write_file'), sha256: Sha256, created: z.boolean() }),
  z.strictObject({ kind: z.literal('edit_file'), sha256: Sha256, previousSha256: Sha256 }),
  z.strictObject({ kind: z.literal('list'), entries: z.array(ListEntry) }),
  z.strictObject({ kind: z.literal('glob'), paths: z.array(z.string()) }),
  z.strictObject({ kind: z.literal('grep'), matches: z.array(GrepMatch) }),
  z.strictObject({
    kind: z.literal('exec'),
    stdoutBytes: z.number().int().nonnegative(),
    stderrBytes: z.number().int().nonnegative(),
  }),
  z.strictObject({ kind: z.literal('changes'), files: z.array(ChangedFile) }),
  z.strictObject({ kind: z.literal('resolve'), paths: z.array(PathResolution) }),
  z.strictObject({
    kind: z.literal('mcp_session'),
    stdoutBytes: z.number().int().nonnegative(),
    stderrBytes: z.number().int().nonnegative(),
  }),
  z.strictObject({ kind: z.literal('mcp_send'), bytes: z.number().int().nonnegative() }),
]);
export type ResultData = z.infer<typeof ResultData>;

export const InvocationResult = z.strictObject({
  v: Version,
  /** Echoed from the invocation; "unknown" when the message could not be parsed at all. */
  invocationId: z.string().min(1).max(128),
  runId: z.string().max(128),
  sandboxId: z.string().max(128),
  primitive: PrimitiveName.optional(),
  status: ResultStatus,
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  /** The primary text output, capped at the invocation's outputCap. */
  output: z.string(),
  /** Bytes the primitive produced before capping. */
  bytes: z.number().int().nonnegative(),
  truncated: z.boolean(),
  durationMs: z.number().nonnegative(),
  filesChanged: z.array(z.string()),
  data: ResultData.optional(),
  error: ResultError.optional(),
  /** True when this is the recorded result of an invocation id that already ran (a redelivery). */
  replayed: z.boolean(),
});
export type InvocationResult = z.infer<typeof InvocationResult>;

export const OutputChunk = z.strictObject({
  v: Version,
  invocationId: Id,
  seq: z.number().int().nonnegative(),
  stream: z.enum(['stdout', 'stderr']),
  data: z.string(),
});
export type OutputChunk = z.infer<typeof OutputChunk>;

export const Heartbeat = z.strictObject({
  v: Version,
  kind: z.enum(['ready', 'heartbeat']),
  runId: Id,
  sandboxId: Id,
  agentVersion: z.string().max(64),
  pid: z.number().int(),
  uptimeMs: z.number().nonnegative(),
  inflight: z.number().int().nonnegative(),
  rssBytes: z.number().int().nonnegative(),
  ts: z.string(),
});
export type Heartbeat = z.infer<typeof Heartbeat>;

export const Cancel = z.strictObject({
  v: Version,
  runId: Id,
  sandboxId: Id,
  invocationId: Id,
  reason: z.string().max(1024).optional(),
  /** Signed like invocations: a forged cancel would kill approved work. */
  signature: Signature,
});
export type Cancel = z.infer<typeof Cancel>;

/** A result that carries no output, only why: a refusal, or a call that never got a result back. */
export function errorResult(o: {
  invocationId: string;
  runId: string;
  sandboxId: string;
  status: Extract<ResultStatus, 'rejected' | 'failed'>;
  code: ErrorCode;
  message: string;
  path?: string;
}): InvocationResult {
  return {
    v: PROTOCOL_VERSION,
    invocationId: o.invocationId,
    runId: o.runId,
    sandboxId: o.sandboxId,
    status: o.status,
    exitCode: null,
    signal: null,
    output: '',
    bytes: 0,
    truncated: false,
    durationMs: 0,
    filesChanged: [],
    error: { code: o.code, message: o.message.slice(0, 4096), ...(o.path ? { path: o.path } : {}) },
    replayed: false,
  };
}
