import { z } from 'zod';
import { Agent, Refusal, Status, Usage } from './report-agent-schema';
import { ReportPlan } from './report-plan-schema';

export type { ReportAgent } from './report-agent-schema';

/**
 * The facts `gatehouse report RUN --format json` prints (docs/report.md). Consumers branch on
 * `version`: a field is only ever added within a version; renaming, removing or changing the meaning
 * of one bumps it. Every string in here is as the log recorded it: text the model or the repository
 * wrote is not escaped (the Markdown renderer escapes it; a consumer that renders it must too).
 */
export const REPORT_FORMAT = 'gatehouse.report';
export const REPORT_VERSION = 2;

const CheckRun = z.strictObject({
  command: z.string(),
  ranBy: z.enum(['model', 'gatehouse']),
  callId: z.string(),
  observationId: z.string().nullable(),
  exitCode: z.number().int().nullable(),
  passed: z.boolean(),
  reason: z.string().nullable(),
});

const Claim = z.strictObject({
  claim: z.string(),
  cites: z.array(z.string()),
  supported: z.boolean(),
  reason: z.string().nullable(),
});

const Command = z.strictObject({
  callId: z.string(),
  command: z.string(),
  /** Who proposed it: the model, or gatehouse running the check itself. */
  ranBy: z.enum(['model', 'gatehouse']),
  /** null when it did not run to an exit (not run, timed out, lost). */
  exitCode: z.number().int().nullable(),
  /** tool.execution.completed status, or `not_run`. */
  status: z.string(),
  /** The observation the model was shown (`ok`, `failed`, `denied`, …), null when none yet. */
  outcome: z.string().nullable(),
  observationId: z.string().nullable(),
  durationMs: z.number().nullable(),
});

const Approval = z.strictObject({
  requestId: z.string(),
  callId: z.string(),
  tool: z.string(),
  /** The rule that asked. */
  rule: z.string(),
  status: z.enum(['pending', 'granted', 'denied']),
  approver: z.string().nullable(),
  channel: z.string().nullable(),
  scope: z.enum(['once', 'run']).nullable(),
  reason: z.string().nullable(),
  /** When it was asked (approval.requested) and answered; answeredAt null while pending. */
  requestedAt: z.string(),
  answeredAt: z.string().nullable(),
});

export const RunReport = z.strictObject({
  format: z.literal(REPORT_FORMAT),
  version: z.literal(REPORT_VERSION),
  run: z.strictObject({
    runId: z.string(),
    parentRunId: z.string().nullable(),
    task: z.string(),
    model: z.string().nullable(),
    mode: z.string().nullable(),
    repo: z.string().nullable(),
    startedAt: z.string().nullable(),
    /** The time of the log's last event. */
    lastEventAt: z.string().nullable(),
    turns: z.number().int(),
    toolCalls: z.number().int(),
    /** Tool calls by tool name. */
    toolCallsByTool: z.record(z.string(), z.number().int()),
  }),
  outcome: z.strictObject({
    status: Status,
    stopReason: z.string().nullable(),
    /** run.completed.decidedBy; null when the log does not record it (older logs, unfinished runs). */
    decidedBy: z.string().nullable(),
    /** The exit code `gatehouse run` gives for this ending; null while the run is unfinished. */
    exitCode: z.number().int().nullable(),
  }),
  answer: z.string().nullable(),
  check: z.strictObject({
    /** The configured check command, from the run's recorded config. */
    configured: z.string().nullable(),
    /** `passed`/`failed`: the last run.check; `not_recorded`: configured, but the log has no run.check; `none`. */
    result: z.enum(['passed', 'failed', 'not_recorded', 'none']),
    runs: z.array(CheckRun),
    /** What the last check run printed, as its observation showed the model. */
    output: z.string().nullable(),
  }),
  /** Answers and replies sent back to the model instead of ending the run (run.feedback). */
  feedback: z.array(
    z.strictObject({
      turn: z.number().int(),
      kind: z.string().nullable(),
      reason: z.string(),
      claims: z.array(Claim).nullable(),
    }),
  ),
  changes: z.strictObject({
    /** null when the run has not completed (no run.completed yet). */
    files: z.array(z.string()).nullable(),
    applied: z.boolean().nullable(),
    /** The diff file, relative to the run's directory, and its text (cut at `diffLimit` bytes). */
    diffFile: z.string().nullable(),
    diff: z.string().nullable(),
    diffBytes: z.number().int().nullable(),
    diffTruncated: z.boolean(),
    /** Why the diff could not be read, when it was named but could not be. */
    diffError: z.string().nullable(),
  }),
  commands: z.array(Command),
  approvals: z.array(Approval),
  refusals: z.array(Refusal),
  usage: Usage,
  agents: Agent,
  /** A plan run's plan (report-plan-schema.ts); absent for every other run. */
  plan: ReportPlan.optional(),
});
export type RunReport = z.infer<typeof RunReport>;
export type ReportCommand = z.infer<typeof Command>;
export type ReportRefusal = z.infer<typeof Refusal>;
export type ReportApproval = z.infer<typeof Approval>;
export type ReportCheckRun = z.infer<typeof CheckRun>;
