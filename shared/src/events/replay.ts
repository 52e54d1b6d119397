import { z } from 'zod';
import { Sha256Hex } from '../ids';

/**
 * Events of a replay (issue 14): a replay is a run of its own (`run.started.replay` names the run it
 * replays and the mode), whose log records what it compared, step by step, and a summary. A replay
 * never changes the replayed run's log or its repository.
 */
const CallId = z.string().min(1).max(128);
const Hash = Sha256Hex;
const Turn = z.number().int().positive();

export const ReplayMode = z.enum(['trace', 'dry-run', 'model', 'execution']);
export type ReplayMode = z.infer<typeof ReplayMode>;

/** `run.started.replay`: what this run replays. */
export const ReplayOf = z.strictObject({
  /** The replayed run's id. */
  of: z.string().min(1).max(128),
  mode: ReplayMode,
  /** Hash of the replayed log's last event when the replay began: the replay is of exactly that log. */
  headHash: Hash,
  /** dry-run: the policy replayed against (its source and hash); model: the model given the context. */
  policy: z.strictObject({ source: z.string(), sha256: Hash }).optional(),
  model: z.string().optional(),
  /** execution: whether calls that are not read-only were allowed to run (inside the fresh sandbox only). */
  allowWrites: z.boolean().optional(),
});
export type ReplayOf = z.infer<typeof ReplayOf>;

/** A decision as the gate made it: `rejected` when validation refused the call before any decision. */
const Decision = z.strictObject({
  decision: z.enum(['allow', 'ask', 'deny', 'rejected']),
  /** The rule that decided (policy rule text, a mode default, a validation code), null when unknown. */
  rule: z.string().max(2000).nullable(),
  /** Who decided: policy, a person or approver (`user:…`), `runtime`; null when unknown. */
  by: z.string().max(256).nullable(),
});

/** What an execution produced, as far as a replay compares it. */
const ExecutionFacts = z.strictObject({
  status: z.string().max(64),
  exitCode: z.number().int().nullable(),
  /** SHA-256 of the primitive's raw output (null when the recorded run did not record one). */
  outputSha256: Hash.nullable(),
  filesChanged: z.array(z.string()),
});

const ToolCall = z.strictObject({ callId: CallId.optional(), name: z.string(), input: z.unknown() });

export const ReplayEventData = {
  /** trace and model: one recorded turn rebuilt from the log, and whether it hashes the same. */
  'replay.turn': z.strictObject({
    turn: Turn,
    context: z.strictObject({ recorded: Hash, replayed: Hash }),
    /** recorded is null for logs written before model.request carried stateSha256. */
    state: z.strictObject({ recorded: Hash.nullable(), replayed: Hash }),
    match: z.boolean(),
    /** Observations the model had seen by this turn (ids), and the calls it then proposed. */
    observations: z.array(z.string()),
    calls: z.array(ToolCall),
  }),
  /** dry-run: a recorded intent validated and decided again under today's (or the given) policy. */
  'replay.decision': z.strictObject({
    callId: CallId,
    tool: z.string(),
    actionHash: Hash.nullable(),
    /** It executed in the recorded run. */
    ran: z.boolean(),
    then: Decision,
    now: Decision,
    changed: z.boolean(),
  }),
  /** model: the first turn where the new model's calls differ from the recorded ones. */
  'replay.divergence': z.strictObject({
    turn: Turn,
    contextSha256: Hash,
    recorded: z.strictObject({ text: z.string(), calls: z.array(ToolCall) }),
    replayed: z.strictObject({ text: z.string(), calls: z.array(ToolCall) }),
    reason: z.string().max(2000),
  }),
  /** execution: a recorded call run again in a fresh sandbox, or why it was not. */
  'replay.execution': z.strictObject({
    callId: CallId,
    tool: z.string(),
    readOnly: z.boolean(),
    outcome: z.enum(['same', 'drift', 'skipped']),
    recorded: ExecutionFacts,
    replayed: ExecutionFacts.nullable(),
    /** What differs (drift) or why it did not run (skipped). */
    reason: z.string().max(2000).optional(),
  }),
  /** The replay's verdict; run.completed follows it. */
  'replay.summary': z.strictObject({
    mode: ReplayMode,
    of: z.string(),
    /** Steps compared (turns, decisions or calls), and how many of them differed. */
    compared: z.number().int().nonnegative(),
    differed: z.number().int().nonnegative(),
    skipped: z.number().int().nonnegative(),
    /**
     * `match`: nothing differed; `changed` (dry-run): decisions changed, none that ran is now denied;
     * `denied` (dry-run): an action that ran would now be denied; `diverged` (model); `drift`
     * (execution); `mismatch` (trace): a rebuilt hash differs from the recorded one.
     */
    verdict: z.enum(['match', 'changed', 'denied', 'diverged', 'drift', 'mismatch']),
  }),
} as const;
