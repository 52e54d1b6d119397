import type { PlanChanges, RecoveryChoice } from '@gatehouse/shared';

/**
 * How a pending approval reaches a person (or a CI rule) and how the answer comes back. A channel
 * only carries the question and the answer: the pipeline writes `approval.requested` before it
 * asks and `approval.granted` / `approval.denied` after, and only the pipeline's own code does.
 */

export type ApprovalScope = 'once' | 'run';
export type ApprovalChannelName = 'terminal' | 'headless' | 'nats' | 'cli';

/** What an approver is shown. */
export interface ApprovalPrompt {
  runId: string;
  /** Stable id of this request; `gatehouse approve RUN REQUEST` names it. */
  requestId: string;
  tool: string;
  input: unknown;
  /** Hash of the exact tool and canonical input; an approval is bound to it. */
  actionHash: string;
  /** The rule that asked (`ask: bash(git commit*)`), or the mode default (`mode confirm-each`). */
  rule: string;
  reason: string;
  /** e.g. the shell classes of a command (`network: curl`), or `write: src/a.ts`. */
  risk: string[];
  /** What will happen, for a person: the command line, or a unified diff for an edit or write. */
  preview: string;
  /** Run ids from the root agent down to the one asking (one element for a top-level run). */
  lineage: string[];
}

export type ApprovalAnswer =
  | {
      decision: 'grant';
      scope: ApprovalScope;
      approver: string;
      channel: ApprovalChannelName;
      reason?: string;
      /** A plan (`submit_plan`) approved with changes; validated again before it is recorded. */
      changes?: PlanChanges;
      /** The answer to an escalation (tool `escalation`): retry, skip or abort the task. */
      choice?: RecoveryChoice;
    }
  | {
      decision: 'deny';
      approver: string;
      channel: ApprovalChannelName;
      reason: string;
      /** Not a rejection: `reason` is the approver's question about a plan, for the model to answer. */
      clarify?: boolean;
    }
  /** Nobody can answer now (headless `--on-ask pause`): the run pauses; `gatehouse approve` answers later. */
  | { decision: 'pause'; channel: ApprovalChannelName; reason: string };

export interface ApprovalChannel {
  readonly name: ApprovalChannelName;
  /** Must settle: a channel that cannot reach anyone answers `pause` or `deny`, never hangs forever. */
  ask(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalAnswer>;
  close?(): Promise<void>;
}
