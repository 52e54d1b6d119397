import { z } from 'zod';
import { Id } from '../ids';

/**
 * Events of plan mode (issue 15, `gatehouse plan`): the model explores read-only and submits a plan;
 * the plan passes the approval gate (a person, a NATS approver or a policy rule), possibly changed;
 * the approved plan is executed task by task, exactly; every failure is classified before a
 * recovery recipe is applied, and what a recipe cannot settle is put to a person.
 */
const CallId = z.string().min(1).max(128);

/** A task id as the model names it: `t1`, `setup-db`. */
export const PlanTaskId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/, 'a task id is 1-32 letters, digits, _ . - (e.g. t1)');

/** One task of a plan, as submitted (`submit_plan`) and as approved (after a person's changes). */
export const PlanTask = z.strictObject({
  id: PlanTaskId,
  title: z.string().min(1).max(300),
  /** A command whose exit status 0 proves the task done; run in the sandbox after `complete_task`. */
  check: z.string().min(1).max(2000).optional(),
  dependsOn: z.array(PlanTaskId).max(7).default([]),
  /** The tools this task may use (absent: every tool of the run). */
  tools: z.array(z.string().min(1).max(64)).max(64).optional(),
  /** Workspace globs this task may touch (absent: every path of the run). */
  paths: z.array(z.string().min(1).max(300)).max(64).optional(),
});
export type PlanTask = z.infer<typeof PlanTask>;

/** What an approver changed before approving: tasks skipped, a new order, titles edited. */
export const PlanChanges = z.strictObject({
  skip: z.array(PlanTaskId).max(7).optional(),
  order: z.array(PlanTaskId).max(7).optional(),
  /** Task id → its new title. */
  edit: z.record(PlanTaskId, z.string().min(1).max(300)).optional(),
});
export type PlanChanges = z.infer<typeof PlanChanges>;

/** Every failure is one of these before anything is done about it (plan/classify-failure.ts). */
export const FailureClass = z.enum(['transient', 'permission', 'invalid_input', 'logic', 'unrecoverable', 'unknown']);
export type FailureClass = z.infer<typeof FailureClass>;

/** What a person can decide when recovery escalates. */
export const RecoveryChoice = z.enum(['retry', 'skip', 'abort']);
export type RecoveryChoice = z.infer<typeof RecoveryChoice>;

const Seq = z.number().int().positive();
const Total = z.number().int().positive();

export const PlanEventData = {
  /** A plan the model submitted and that passed validation (a rejected one is only an observation). */
  'plan.created': z.strictObject({
    planId: Id,
    /** The submit_plan call that proposed it. */
    callId: CallId,
    /** 1 for the first plan of the run, 2 for a revision… */
    version: z.number().int().positive(),
    tasks: z.array(PlanTask).min(1).max(7),
    /** Every dependency as [task, the task it depends on]. */
    dependencies: z.array(z.tuple([PlanTaskId, PlanTaskId])),
  }),
  /** The gate's steps for a plan: asked, approved as it was, approved with changes, rejected, asked a question. */
  'plan.gate': z.strictObject({
    planId: Id,
    status: z.enum(['requested', 'approved', 'modified', 'rejected', 'clarification']),
    /** The approval request (absent when a policy rule decided). */
    requestId: Id.optional(),
    /** Who decided: `policy:RULE`, a person or approver, `runtime`. */
    by: z.string().max(256).optional(),
    changes: PlanChanges.optional(),
    /** The tasks to execute, in order, after the changes (approved and modified). */
    tasks: z.array(PlanTask).max(7).optional(),
    /** Why it was rejected, or the approver's question. */
    reason: z.string().max(4000).optional(),
  }),
  'task.started': z.strictObject({
    planId: Id,
    taskId: PlanTaskId,
    title: z.string(),
    /** Its place in the approved plan: [Task index/total]. */
    index: Seq,
    total: Total,
    /** 1 the first time; more when recovery retries it. */
    attempt: z.number().int().positive(),
  }),
  'task.completed': z.strictObject({
    planId: Id,
    taskId: PlanTaskId,
    title: z.string(),
    index: Seq,
    total: Total,
    /** The model's complete_task summary. */
    result: z.string().max(4000),
    /** The complete_task call, and the observations its summary cites. */
    callId: CallId.optional(),
    evidence: z.array(z.string()).max(100).optional(),
    /** The task's check, when it has one: the command and its exit status (0: passed). */
    check: z.strictObject({ command: z.string(), exitCode: z.number().int().nullable(), callId: CallId }).optional(),
  }),
  'task.failed': z.strictObject({
    planId: Id,
    taskId: PlanTaskId,
    title: z.string(),
    index: Seq,
    total: Total,
    error: z.string().max(4000),
    /** The call whose result failed it, when one did. */
    callId: CallId.optional(),
  }),
  /** A failure, classified before any recovery (plan/classify-failure.ts). */
  'failure.classified': z.strictObject({
    planId: Id,
    taskId: PlanTaskId,
    class: FailureClass,
    /** What decided the class: the words, status or exit code that matched. */
    evidence: z.string().max(2000),
    callId: CallId.optional(),
  }),
  /** A recovery recipe was applied: what it did, which attempt, and how it ended. */
  'recovery.applied': z.strictObject({
    planId: Id,
    taskId: PlanTaskId,
    class: FailureClass,
    recipe: z.string().max(200),
    attempt: z.number().int().positive(),
    maxAttempts: z.number().int().nonnegative(),
    /** retrying: the attempt starts now; exhausted: no attempts left (escalation follows). */
    outcome: z.enum(['retrying', 'succeeded', 'failed', 'exhausted']),
    delayMs: z.number().int().nonnegative().optional(),
  }),
  /**
   * Recovery could not settle a failure: a person is asked to retry, skip or abort (`requested`,
   * then `decided` with the decision). Never a request for credentials.
   */
  'recovery.escalated': z.strictObject({
    planId: Id,
    taskId: PlanTaskId,
    class: FailureClass,
    reason: z.string().max(4000),
    status: z.enum(['requested', 'decided']),
    requestId: Id.optional(),
    decision: RecoveryChoice.optional(),
    by: z.string().max(256).optional(),
  }),
  /** The plan's end: which tasks completed, failed and were skipped, and the one-line summary. */
  'plan.completed': z.strictObject({
    planId: Id,
    completed: z.array(PlanTaskId),
    failed: z.array(PlanTaskId),
    skipped: z.array(PlanTaskId),
    /** "3/3 tasks completed. 0 failures." */
    summary: z.string().max(2000),
    aborted: z.boolean().optional(),
  }),
} as const;
