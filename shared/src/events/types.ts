import { z } from 'zod';
import { Id, Sha256Hex } from '../ids';
import { ResultStatus } from '../protocol/messages';
import { EnvironmentEventData } from './environment';
import { McpEventData, RecordedMcpServer } from './mcp';
import { RunUsage, VerdictEventData } from './verdict';
import { RecordedBudgets, RecordedPrice } from './price';
import { ReplayEventData, ReplayOf } from './replay';
import { MemoryEventData } from './memory';
import { PlanChanges, PlanEventData, PlanTaskId, RecoveryChoice } from './plan';
import { ResolvedPathRecord, ValidationError } from './validation';

export { ValidationError } from './validation';

/**
 * `data` of each event type. Names are stable: logs outlive code. Types that later parts of the
 * system add (model.*, approval.*, agent.*, plan.*) get their schemas with the code that writes them.
 */
const CallId = z.string().min(1).max(128);
const Hash = Sha256Hex;

export const EventData = {
  'run.started': z.strictObject({
    task: z.string(),
    mode: z.string(),
    /** Tools the model may see in this run. */
    surface: z.array(z.string()),
    repo: z.string().optional(),
    model: z.string().optional(),
    /** The policy this run is held to, as loaded (resume uses this, not the file as it is now). */
    policy: z.strictObject({ source: z.string(), sha256: Hash, file: z.unknown() }).optional(),
    /** Run ids from the root agent to this one. */
    lineage: z.array(z.string()).optional(),
    /**
     * What the repository (`repo`, its real absolute path) held at the start, so resume can say it
     * changed: a git repository's HEAD tree, whether it was dirty and a hash of the uncommitted
     * changes; otherwise a hash of its files (orchestrator/src/run/repo-tree.ts).
     */
    tree: z
      .discriminatedUnion('kind', [
        z.strictObject({
          kind: z.literal('git'),
          tree: z.string().max(128),
          dirty: z.boolean(),
          changes: Hash.optional(),
        }),
        z.strictObject({ kind: z.literal('files'), hash: Hash, files: z.number().int().nonnegative() }),
      ])
      .optional(),
    /** The run's budgets (resume keeps them unless told otherwise). */
    budgets: z
      .strictObject({
        maxTurns: z.number().int(),
        maxToolCalls: z.number().int(),
        maxTokens: z.number().int(),
        wallClockMs: z.number(),
        /** Spend ceiling in US dollars (issue 13); absent means no cost budget. */
        maxCostUsd: z.number().nonnegative().optional(),
      })
      .optional(),
    /** The price each model.output's costUsd was reckoned by (./price.ts); absent: costs are unknown. */
    price: RecordedPrice.optional(),
    /**
     * The project config the run used: where it came from, the hash of its inputs (trusted file,
     * repository file, --image), and what was not taken from the repository's config.
     */
    config: z
      .strictObject({
        source: z.string(),
        sha256: Hash,
        ignored: z.array(z.string()),
        /** What the run's sandboxes were made from, so resume prepares the same environment (never secrets). */
        environment: z
          .strictObject({
            image: z.string(),
            setup: z.array(z.string()),
            check: z.string().optional(),
            egress: z.strictObject({
              setup: z.array(z.string()),
              agent: z.array(z.string()),
              deny: z.array(z.string()),
            }),
            copy: z.strictObject({ exclude: z.array(z.string()), include: z.array(z.string()) }),
            limits: z.record(z.string(), z.number()),
            setupSecrets: z.array(z.string()),
            /** The MCP servers (schema 8), by name, as resume starts them again: names of env and headers only. */
            mcp: z.record(z.string(), RecordedMcpServer).optional(),
          })
          .optional(),
      })
      .optional(),
    /** A replay (issue 14, ./replay.ts): the run it replays and how. Absent for every other run. */
    replay: ReplayOf.optional(),
    /** Plan mode (`gatehouse plan`, ./plan.ts): plan, gate, then execute the approved plan exactly. */
    planMode: z.literal(true).optional(),
  }),
  'run.completed': z.strictObject({
    status: z.enum(['final', 'partial', 'failed', 'cancelled']),
    stopReason: z.string(),
    answer: z.string().optional(),
    /** Workspace files the run changed, and whether they were written back to the repository. */
    filesChanged: z.array(z.string()).optional(),
    applied: z.boolean().optional(),
    diffFile: z.string().optional(),
    /** Changed files --apply refused, with the reason (one refusal and nothing is written). */
    refused: z.array(z.strictObject({ path: z.string(), reason: z.string() })).optional(),
    /** Changed files not exported (too large, or not a file), with their sizes. */
    skipped: z
      .array(z.strictObject({ path: z.string(), size: z.number().int().nonnegative(), reason: z.string() }))
      .optional(),
    /** Writing to the repository failed part way: what was and was not written. */
    applyError: z.string().optional(),
    /**
     * Which rule decided the status (docs/runs.md): `answer` (a final answer accepted, no check
     * configured), `check` (the check command's result), `claims` (claims the evidence does not
     * support), `truncated` (the model's output was cut off), `budget`, `repeated_failure`,
     * `model_error`, `setup`, `sandbox`, `cancelled`.
     */
    decidedBy: z.string().max(64).optional(),
    /** The whole run's model usage; costUsd is null when no price is known for the model. */
    usage: RunUsage.optional(),
  }),
  /**
   * The workspace saved beside the log after calls that can change it (resume restores the last
   * one): a manifest of changed paths by content hash, relative to the run's folder.
   */
  'workspace.checkpoint': z.strictObject({
    checkpoint: z.number().int().positive(),
    manifest: z.string(),
    manifestSha256: Hash,
    /** Every call completed at or before this seq has its effects in this checkpoint. */
    afterSeq: z.number().int().nonnegative(),
    files: z.number().int().nonnegative(),
    deleted: z.number().int().nonnegative(),
    skipped: z.array(z.strictObject({ path: z.string(), size: z.number().int().nonnegative() })),
  }),
  /** A model call: which model, how big the context was, what was compacted. */
  'model.request': z.strictObject({
    turn: z.number().int().positive(),
    model: z.string(),
    messages: z.number().int().nonnegative(),
    estimatedTokens: z.number().int().nonnegative(),
    /** Observations replaced by a reference to keep within the budget (the log keeps them whole). */
    compacted: z.array(z.string()),
    contextSha256: Hash,
    /** Canonical hash of the run's folded state (events/state.ts) from the events before this one: replay checks it. */
    stateSha256: Hash.optional(),
    /**
     * The context's token budget this turn (over it, old observations are compacted): replay rebuilds the context with
     * it. Absent in logs written before it was recorded, when it was always the default, 100,000.
     */
    contextTokenBudget: z.number().optional(),
  }),
  /** What the model answered, verbatim: untrusted proposals, not actions. */
  'model.output': z.strictObject({
    turn: z.number().int().positive(),
    text: z.string(),
    toolCalls: z.array(
      z.strictObject({
        callId: z.string(),
        name: z.string(),
        input: z.unknown(),
        parseError: z.string().optional(),
        /** Cut off by the output limit before its arguments ended: recorded, never run. */
        truncated: z.boolean().optional(),
      }),
    ),
    stopReason: z.string(),
    usage: z.strictObject({
      inputTokens: z.number().int().nonnegative(),
      outputTokens: z.number().int().nonnegative(),
      /** Input tokens the provider served from its prompt cache (part of inputTokens). */
      cachedInputTokens: z.number().int().nonnegative().optional(),
      /** This turn's cost by the price table in force when it ran; absent when no price is known. */
      costUsd: z.number().nonnegative().optional(),
    }),
    retries: z.number().int().nonnegative(),
    error: z.strictObject({ kind: z.string(), message: z.string() }).optional(),
    /** How the stop reason was arrived at when the provider did not say (e.g. `[DONE]` without finish_reason). */
    stopNote: z.string().max(1024).optional(),
  }),
  'sandbox.started': z.strictObject({
    sandboxId: Id,
    containerId: z.string(),
    image: z.string(),
    timings: z.record(z.string(), z.number()),
    /** Repository paths not copied in because the policy denies reading them (first 200). */
    withheld: z.array(z.string()).max(200).optional(),
    withheldCount: z.number().int().nonnegative().optional(),
    /** Repository paths made read-only to commands because the policy denies writing them. */
    protectedPaths: z.number().int().nonnegative().optional(),
    /** Something was withheld, so the repository's .git (its objects) was too: a fresh one stands in. */
    freshRepository: z.boolean().optional(),
    freshRepositoryReason: z.string().max(1024).optional(),
    /** What the copy-in has to tell the person (a link leading outside the repository, not copied). */
    notices: z.array(z.string()).max(50).optional(),
  }),
  'sandbox.lost': z.strictObject({ sandboxId: Id, reason: z.string() }),
  /** Exactly what the model proposed, before anything was checked. */
  'tool.intent': z.strictObject({
    callId: CallId,
    turn: z.number().int().nonnegative(),
    tool: z.string(),
    input: z.unknown(),
    /** Plan mode: the approved plan's task this call was made in (absent while planning). */
    taskId: PlanTaskId.optional(),
  }),
  'tool.validation': z.strictObject({
    callId: CallId,
    ok: z.boolean(),
    /** The stage that decided: tool known, tool visible this turn, input schema, run-state semantics. */
    stage: z.enum(['known', 'surface', 'schema', 'semantic', 'plan']),
    errors: z.array(ValidationError),
    /** The input as validated (defaults applied); present when ok. */
    input: z.unknown().optional(),
    /** Where the call's workspace paths really lead (symlinks resolved), as the policy saw them. */
    resolved: z.array(ResolvedPathRecord).optional(),
  }),
  'tool.approval': z.strictObject({
    callId: CallId,
    decision: z.enum(['allow', 'ask', 'deny']),
    policyId: z.string(),
    reason: z.string(),
    /** Canonical hash of tool and validated input: what an approval is bound to. */
    actionHash: Hash,
    /** Hash of the primitive and input that will run; the sandbox refuses anything else. */
    executionHash: Hash.optional(),
    /** What made it risky (shell classes, side effect), for approvers and `gatehouse show`. */
    risk: z.array(z.string()).optional(),
    /** Set when the decision came from where a path resolves, not from the path as requested. */
    resolvedFrom: z.strictObject({ path: z.string(), real: z.string() }).optional(),
  }),
  /**
   * A person (or a CI rule) must decide. Written, and made durable, before anyone is asked; the
   * requestId is what `gatehouse approve RUN REQUEST` and the NATS channel name.
   */
  'approval.requested': z.strictObject({
    requestId: Id,
    callId: CallId,
    tool: z.string(),
    input: z.unknown(),
    actionHash: Hash,
    executionHash: Hash,
    /** The rule that asked, or the mode default. */
    rule: z.string(),
    reason: z.string(),
    risk: z.array(z.string()),
    /** The action's shape (confirm-novel: an approved shape is not asked again in the run). */
    shape: z.string(),
    /** Run ids from the root agent to the one asking. */
    lineage: z.array(z.string()),
  }),
  'approval.granted': z.strictObject({
    requestId: Id,
    callId: CallId,
    actionHash: Hash,
    executionHash: Hash,
    scope: z.enum(['once', 'run']),
    approver: z.string(),
    channel: z.enum(['terminal', 'headless', 'nats', 'cli']),
    reason: z.string(),
    /** Plan mode: a plan approved with changes (the gate applies them, validated again). */
    changes: PlanChanges.optional(),
    /** Plan mode: a person's answer to an escalation (tool `escalation`). */
    choice: RecoveryChoice.optional(),
  }),
  'approval.denied': z.strictObject({
    requestId: Id,
    callId: CallId,
    actionHash: Hash,
    approver: z.string(),
    channel: z.enum(['terminal', 'headless', 'nats', 'cli']),
    reason: z.string(),
    /** Plan mode: not a rejection but a question for the model (`reason` holds it). */
    clarify: z.boolean().optional(),
  }),
  /**
   * A sub-agent was started (written in both the parent's and the child's log): who, why, with
   * what handed over (by hash), which tools it sees and the policy it is held to.
   */
  'agent.spawned': z.strictObject({
    parentRunId: Id,
    childRunId: Id,
    /** The parent's delegate call. */
    callId: CallId,
    reason: z.string(),
    handoffSha256: Hash,
    tools: z.array(z.string()),
    paths: z.array(z.string()),
    evidence: z.array(z.strictObject({ id: z.string(), sha256: Hash })),
    budget: z.strictObject({
      turns: z.number().int(),
      toolCalls: z.number().int(),
      tokens: z.number().int(),
      seconds: z.number(),
    }),
    policy: z.strictObject({
      mode: z.string(),
      source: z.string(),
      sha256: Hash,
      rules: z.number().int(),
      paths: z.array(z.string()),
    }),
    depth: z.number().int().positive(),
  }),
  /** A sub-agent ended (both logs): status, a hash of its answer, the evidence it cites, its changes. */
  'agent.completed': z.strictObject({
    parentRunId: Id,
    childRunId: Id,
    callId: CallId,
    status: z.string(),
    stopReason: z.string(),
    resultSha256: Hash.nullable(),
    evidence: z.array(z.string()),
    filesChanged: z.array(z.string()),
    /** Of those, the ones outside the child's paths: never applied to the parent's workspace. */
    withheld: z.array(z.string()),
    /** What the child was refused (by policy or by a person), one line each. */
    denied: z.array(z.string()).optional(),
  }),
  /** An approval answer that was refused (bad signature, unknown approver…): on record, never a grant. */
  'approval.rejected': z.strictObject({ requestId: z.string(), channel: z.string(), reason: z.string() }),
  /** The run stopped to wait for approvals; the workspace as it stood is saved so resume can restore it. */
  'run.paused': z.strictObject({
    pending: z.array(Id),
    /**
     * The workspace's changed files, saved beside the log (`dir`, relative to the run's folder), and the ones it
     * deleted.
     */
    workspace: z.strictObject({ dir: z.string().nullable(), files: z.array(z.string()), deleted: z.array(z.string()) }),
  }),
  'run.resumed': z.strictObject({
    /** seq of the last event before this resume. */
    fromSeq: z.number().int().nonnegative(),
    /** Where the restored workspace came from: the pause snapshot, or the previous sandbox itself. */
    workspaceFrom: z.enum(['pause-snapshot', 'previous-sandbox', 'repository', 'checkpoint']),
    files: z.array(z.string()),
    /** The budgets from here on (./price.ts); absent in logs from before they were recorded here. */
    budgets: RecordedBudgets.optional(),
  }),
  'tool.execution.started': z.strictObject({
    callId: CallId,
    invocationId: z.string(),
    /** Where it runs: a sandbox primitive, or the orchestrator itself (read_artifact). */
    executor: z.enum(['sandbox', 'orchestrator']),
    primitive: z.string(),
    /** Exactly what was sent for execution (command, cwd, timeout are in here). */
    input: z.unknown(),
    timeoutMs: z.number().int().nonnegative(),
    approvalId: z.string(),
    sandboxId: z.string().optional(),
  }),
  'tool.execution.completed': z.strictObject({
    callId: CallId,
    invocationId: z.string(),
    status: ResultStatus.or(z.literal('lost')),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
    durationMs: z.number().nonnegative(),
    bytes: z.number().int().nonnegative(),
    truncated: z.boolean(),
    filesChanged: z.array(z.string()),
    artifactRefs: z.array(z.string()),
    /** The full SHA-256 and size of each stored artifact (a ref names only a prefix): verify re-hashes the files. */
    artifacts: z
      .array(z.strictObject({ ref: z.string(), sha256: Hash, bytes: z.number().int().nonnegative() }))
      .optional(),
    /** Content hashes this run now knows (a full read, or its own write or edit), by workspace path. */
    fileHashes: z.record(z.string(), Hash).optional(),
    /** SHA-256 of the primitive's whole raw output before framing (replay's execution mode compares it). */
    outputSha256: Hash.optional(),
    error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
  }),
  /** What the model was shown, verbatim. */
  'tool.observation': z.strictObject({
    callId: CallId,
    observationId: z.string().regex(/^obs-\d+$/),
    tool: z.string(),
    outcome: z.enum(['ok', 'failed', 'rejected', 'denied', 'pending']),
    content: z.string(),
    truncated: z.boolean(),
    artifactRef: z.string().optional(),
  }),
  ...EnvironmentEventData,
  ...VerdictEventData,
  ...ReplayEventData,
  ...PlanEventData,
  ...MemoryEventData,
  ...McpEventData,
} as const;

export type EventType = keyof typeof EventData;
export const EVENT_TYPES = Object.keys(EventData) as EventType[];
export type EventDataOf<T extends EventType> = z.infer<(typeof EventData)[T]>;
