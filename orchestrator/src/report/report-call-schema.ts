import { z } from 'zod';

/**
 * One tool call of a run, phase by phase, as its log records it: what the model proposed (intent),
 * whether it was well formed (validation), what the policy decided and by which rule (decision), a
 * person's answer when the policy asked (approval), what ran (execution) and what the model was
 * shown (observation). A phase the call never reached is null. Times are the events' own.
 */
export const ReportCall = z.strictObject({
  callId: z.string(),
  turn: z.number().int(),
  tool: z.string(),
  /** Who proposed it: `model`, or `runtime` for gatehouse's own run of the check. */
  actor: z.string(),
  /** The input exactly as proposed. */
  input: z.unknown(),
  proposedAt: z.string(),
  validation: z
    .strictObject({ ok: z.boolean(), stage: z.string(), errors: z.array(z.string()), at: z.string() })
    .nullable(),
  decision: z
    .strictObject({
      decision: z.enum(['allow', 'ask', 'deny']),
      /** The policy rule (or mode default) that decided. */
      rule: z.string(),
      reason: z.string(),
      risk: z.array(z.string()),
      at: z.string(),
    })
    .nullable(),
  approval: z
    .strictObject({
      requestId: z.string(),
      rule: z.string(),
      reason: z.string(),
      requestedAt: z.string(),
      status: z.enum(['pending', 'granted', 'denied']),
      approver: z.string().nullable(),
      channel: z.string().nullable(),
      scope: z.enum(['once', 'run']).nullable(),
      /** The approver's reason. */
      answer: z.string().nullable(),
      answeredAt: z.string().nullable(),
    })
    .nullable(),
  /**
   * What let it run, from the execution's approvalId: the rule's id or `APPROVER via CHANNEL (SCOPE)`;
   * `none (…)` says what stopped a call that did not run (as `gatehouse show --tree` tells it).
   */
  authorisedBy: z.string(),
  execution: z
    .strictObject({
      executor: z.string(),
      primitive: z.string(),
      startedAt: z.string(),
      /** null until it completed (a run stopped mid-call). */
      status: z.string().nullable(),
      exitCode: z.number().int().nullable(),
      signal: z.string().nullable(),
      durationMs: z.number().nullable(),
      filesChanged: z.array(z.string()),
      error: z.string().nullable(),
      completedAt: z.string().nullable(),
    })
    .nullable(),
  observation: z
    .strictObject({
      observationId: z.string(),
      outcome: z.string(),
      /** What the model was shown, verbatim (untrusted). */
      content: z.string(),
      truncated: z.boolean(),
      at: z.string(),
    })
    .nullable(),
  /** The sub-agent a `delegate` call started. */
  childRunId: z.string().nullable(),
});
export type ReportCall = z.infer<typeof ReportCall>;
