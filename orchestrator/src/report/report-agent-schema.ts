import { z } from 'zod';
import { ReportCall } from './report-call-schema';

/** The parts of a run's report that every agent of its tree has, each from its own log. */

export const Status = z.enum(['final', 'partial', 'failed', 'cancelled', 'paused', 'running']);

/** Something the run was not allowed to do, or that was not done for it. */
export const Refusal = z.strictObject({
  /**
   * `policy` (a policy rule denied a call), `person` (an approver denied a request), `rejected` (a
   * call that failed validation), `answer_rejected` (an approval answer refused: bad signature…),
   * `apply` (--apply refused a file, or failed part way), `not_exported` (a changed file too large
   * or not a file), `sub_agent` (what a sub-agent was refused, or changed outside its paths).
   */
  kind: z.enum(['policy', 'person', 'rejected', 'answer_rejected', 'apply', 'not_exported', 'sub_agent']),
  callId: z.string().nullable(),
  tool: z.string().nullable(),
  path: z.string().nullable(),
  /** The rule, person (`NAME via CHANNEL`), validation stage or sub-agent run id that refused. */
  by: z.string().nullable(),
  reason: z.string(),
});

export const Usage = z.strictObject({
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  /** null when no turn recorded it (older logs). */
  cachedInputTokens: z.number().int().nullable(),
  /** null when no price was known (or, summed from turns, some turn recorded none). */
  costUsd: z.number().nullable(),
  /** `run`: run.completed.usage; `turns`: summed from model.output (older logs, unfinished runs). */
  source: z.enum(['run', 'turns']),
  budgets: z.strictObject({ maxTokens: z.number().nullable(), maxCostUsd: z.number().nullable() }).nullable(),
});

/** What the parent handed a sub-agent (its agent.spawned): the task, tools, paths and budget it was given. */
const Handoff = z.strictObject({
  /** The parent's delegate call. */
  callId: z.string(),
  task: z.string(),
  tools: z.array(z.string()),
  paths: z.array(z.string()),
  /** Ids of the evidence handed over (by hash in the log). */
  evidence: z.array(z.string()),
  budget: z.strictObject({ turns: z.number(), toolCalls: z.number(), tokens: z.number(), seconds: z.number() }),
  policy: z.strictObject({ mode: z.string(), source: z.string(), rules: z.number(), paths: z.array(z.string()) }),
});

/** How the parent's log says the sub-agent ended (its agent.completed). */
const Completion = z.strictObject({
  status: z.string(),
  stopReason: z.string(),
  filesChanged: z.array(z.string()),
  /** Changed outside its paths: never applied to the parent's workspace. */
  withheld: z.array(z.string()),
  /** What it was refused, one line each. */
  denied: z.array(z.string()),
});

/** `gatehouse verify` of the agent's log (events/audit.ts), as its lines tell it. */
export const Verify = z.strictObject({
  /** `not_checked`: the log or the key could not be read, or the report's format does not show it (`problems`). */
  verdict: z.enum(['intact', 'failed', 'unanchored', 'not_checked']),
  events: z.number().int(),
  lastHash: z.string().nullable(),
  /** One line per check: chain, keyed MACs, head, completion, artifacts. */
  checks: z.array(z.string()),
  problems: z.array(z.string()),
  unanchored: z.array(z.string()),
  firstBad: z.strictObject({ line: z.number().int(), reason: z.string(), meaning: z.string() }).nullable(),
});

/** One agent of the delegation tree, as `gatehouse show RUN --tree` rebuilds it, with its own log's account. */
export interface ReportAgent {
  runId: string;
  depth: number;
  task: string;
  status: z.infer<typeof Status>;
  stopReason: string | null;
  actions: number;
  problems: string[];
  children: ReportAgent[];
  model: string | null;
  decidedBy: string | null;
  answer: string | null;
  startedAt: string | null;
  lastEventAt: string | null;
  /** null for the root (nothing handed it over) and for a child its parent's log does not name. */
  handoff: z.infer<typeof Handoff> | null;
  completion: z.infer<typeof Completion> | null;
  calls: ReportCall[];
  refusals: z.infer<typeof Refusal>[];
  usage: z.infer<typeof Usage>;
  verify: z.infer<typeof Verify>;
}
export const Agent: z.ZodType<ReportAgent> = z.lazy(() =>
  z.strictObject({
    runId: z.string(),
    depth: z.number().int(),
    task: z.string(),
    status: Status,
    stopReason: z.string().nullable(),
    actions: z.number().int(),
    problems: z.array(z.string()),
    children: z.array(Agent),
    model: z.string().nullable(),
    decidedBy: z.string().nullable(),
    answer: z.string().nullable(),
    startedAt: z.string().nullable(),
    lastEventAt: z.string().nullable(),
    handoff: Handoff.nullable(),
    completion: Completion.nullable(),
    calls: z.array(ReportCall),
    refusals: z.array(Refusal),
    usage: Usage,
    verify: Verify,
  }),
);
export type ReportVerify = z.infer<typeof Verify>;
export type ReportUsage = z.infer<typeof Usage>;
