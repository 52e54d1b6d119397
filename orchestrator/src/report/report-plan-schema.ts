import { z } from 'zod';

/**
 * A plan run's plan in the report (`plan`, present only for a run of `gatehouse plan`; added within
 * report version 2, so a consumer that does not know it ignores it). Task titles, results and
 * summaries are the model's text as the log recorded it: not escaped here.
 */
export const ReportPlan = z.strictObject({
  planId: z.string(),
  /** How many plans passed validation (a revision after a rejection counts). */
  plans: z.number().int(),
  proposed: z.array(
    z.strictObject({ id: z.string(), title: z.string(), dependsOn: z.array(z.string()), check: z.string().nullable() }),
  ),
  gate: z.array(
    z.strictObject({
      status: z.string(),
      by: z.string().nullable(),
      /** An approver's changes: tasks skipped, the new order, titles edited (task id → title). */
      changes: z
        .strictObject({
          skip: z.array(z.string()),
          order: z.array(z.string()),
          edit: z.record(z.string(), z.string()),
        })
        .nullable(),
      reason: z.string().nullable(),
    }),
  ),
  /** The approved plan's tasks in order, then those skipped at the gate (index 0). */
  tasks: z.array(
    z.strictObject({
      id: z.string(),
      title: z.string(),
      index: z.number().int(),
      total: z.number().int(),
      status: z.enum(['completed', 'failed', 'skipped', 'running', 'pending']),
      attempts: z.number().int(),
      result: z.string().nullable(),
      error: z.string().nullable(),
      check: z.strictObject({ command: z.string(), exitCode: z.number().int().nullable() }).nullable(),
    }),
  ),
  deviations: z.array(
    z.strictObject({ callId: z.string(), taskId: z.string().nullable(), tool: z.string(), message: z.string() }),
  ),
  failures: z.array(
    z.strictObject({ taskId: z.string(), class: z.string(), evidence: z.string(), callId: z.string().nullable() }),
  ),
  recoveries: z.array(
    z.strictObject({
      taskId: z.string(),
      class: z.string(),
      recipe: z.string(),
      attempt: z.number().int(),
      maxAttempts: z.number().int(),
      outcome: z.string(),
    }),
  ),
  escalations: z.array(
    z.strictObject({
      taskId: z.string(),
      class: z.string(),
      reason: z.string(),
      requestId: z.string().nullable(),
      /** retry, skip or abort; null while nobody has decided. */
      decision: z.string().nullable(),
      by: z.string().nullable(),
    }),
  ),
  summary: z.string().nullable(),
  aborted: z.boolean(),
});
export type ReportPlan = z.infer<typeof ReportPlan>;
