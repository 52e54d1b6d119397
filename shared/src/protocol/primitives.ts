import { z } from 'zod';
import { Sha256Hex } from '../ids';
import { MAX_PATH_LENGTH, MAX_WRITE_BYTES } from './limits';
import { McpSendInput, McpSessionInput } from './mcp-primitives';

/**
 * The primitives the sandbox daemon can execute. Tools (read_file, bash, ...) are built on top of
 * these in the orchestrator; the daemon knows nothing about tools, models or policy.
 */
export const WorkspacePath = z.string().min(1).max(MAX_PATH_LENGTH);
const Sha256 = Sha256Hex;
const Limit = z.number().int().positive().max(100_000);
/**
 * The workspace-relative realpath the orchestrator's policy decided on (from `resolve`): the daemon
 * refuses with `path_changed` if the path resolves elsewhere when it runs (a symlink swapped in between).
 */
const ExpectReal = z.string().min(1).max(MAX_PATH_LENGTH).optional();

export const ReadFileInput = z.strictObject({
  path: WorkspacePath,
  /** 1-based first line to return. */
  offset: z.number().int().positive().optional(),
  /** Number of lines to return. */
  limit: z.number().int().positive().optional(),
  expectReal: ExpectReal,
});

export const WriteFileInput = z.strictObject({
  path: WorkspacePath,
  content: z.string().max(MAX_WRITE_BYTES),
  /** Precondition: the file's current SHA-256, or null when the file must not exist yet. */
  expectedSha256: Sha256.nullable().optional(),
  expectReal: ExpectReal,
});

export const EditFileInput = z.strictObject({
  path: WorkspacePath,
  oldText: z.string().min(1),
  newText: z.string().max(MAX_WRITE_BYTES),
  /** Precondition: the file must still have the content that was read. */
  expectedSha256: Sha256,
  expectReal: ExpectReal,
});

export const ListInput = z.strictObject({
  path: WorkspacePath.optional(),
  recursive: z.boolean().optional(),
  limit: Limit.optional(),
  expectReal: ExpectReal,
});

export const GlobInput = z.strictObject({
  pattern: z.string().min(1).max(1024),
  path: WorkspacePath.optional(),
  limit: Limit.optional(),
});

export const GrepInput = z.strictObject({
  /** POSIX extended regular expression (grep -E). */
  pattern: z.string().min(1).max(4096),
  path: WorkspacePath.optional(),
  /** Only search files whose name matches this glob (grep --include). */
  include: z.string().min(1).max(256).optional(),
  ignoreCase: z.boolean().optional(),
  limit: Limit.optional(),
  expectReal: ExpectReal,
});

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/);
export const ExecInput = z.strictObject({
  command: z
    .string()
    .min(1)
    .max(128 * 1024),
  /** Working directory inside the workspace. */
  cwd: WorkspacePath.optional(),
  /** Added to the scrubbed environment. */
  env: z.record(EnvName, z.string().max(32 * 1024)).optional(),
  /** Report the workspace files the command changed (costs a scan before and after). */
  trackChanges: z.boolean().optional(),
  /**
   * Run with a HOME the daemon empties and makes just before (as root), so nothing an earlier command
   * left there (~/.npmrc, a Python user site) steers this one: gatehouse's run of the deciding check.
   */
  freshHome: z.boolean().optional(),
});

/** The workspace's changes since the sandbox started, as a git diff. */
export const ChangesInput = z.strictObject({});

/** Where workspace paths really lead (every symlink resolved); read-only, for the policy. */
export const ResolveInput = z.strictObject({ paths: z.array(WorkspacePath).min(1).max(16) });

export const PRIMITIVES = [
  'read_file',
  'write_file',
  'edit_file',
  'list',
  'glob',
  'grep',
  'exec',
  'changes',
  'resolve',
  'mcp_session',
  'mcp_send',
] as const;
export const PrimitiveName = z.enum(PRIMITIVES);
export type PrimitiveName = z.infer<typeof PrimitiveName>;

export const PrimitiveInputs = {
  read_file: ReadFileInput,
  write_file: WriteFileInput,
  edit_file: EditFileInput,
  list: ListInput,
  glob: GlobInput,
  grep: GrepInput,
  exec: ExecInput,
  changes: ChangesInput,
  resolve: ResolveInput,
  mcp_session: McpSessionInput,
  mcp_send: McpSendInput,
} as const satisfies Record<PrimitiveName, z.ZodType>;

export type PrimitiveInput<P extends PrimitiveName> = z.infer<(typeof PrimitiveInputs)[P]>;
