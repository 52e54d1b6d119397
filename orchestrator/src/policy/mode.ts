import { z } from 'zod';
import type { PathDenial } from './path-denial';

/**
 * Permission modes, from strictest to most permissive. A mode is only the default for what no
 * rule names; deny rules hold in every mode.
 *  - read-only: only tools that cannot change anything are visible; anything else is denied.
 *  - confirm-each: every write and every command asks (unless an allow rule covers it).
 *  - confirm-novel (default): asks the first time an action of a given shape is seen in a run;
 *    once a person approved that shape, the same shape runs without asking for the rest of the run.
 *  - sandboxed-auto: inside the sandbox everything runs, except network, privilege, commands the
 *    classifier does not know or cannot follow, and what deny or ask rules name.
 */
export const Mode = z.enum(['read-only', 'confirm-each', 'confirm-novel', 'sandboxed-auto']);
export type Mode = z.infer<typeof Mode>;
export const DEFAULT_MODE: Mode = 'confirm-novel';

/** 0 = strictest. A child's mode is never later in this list than its parent's. */
export function modeRank(mode: Mode): number {
  return Mode.options.indexOf(mode);
}

/** What an action can touch; the approval stage decides on it. */
export type SideEffect = 'read' | 'write' | 'execute' | 'network' | 'delegate';

/** What the approval stage is asked about: a validated call. */
export interface PolicyRequest {
  tool: string;
  input: unknown;
  readOnly: boolean;
  sideEffect: SideEffect;
}

export interface Decision {
  decision: 'allow' | 'ask' | 'deny';
  /** Which rule or default decided: `deny[0] bash(git push*)`, `mode:confirm-each`, `classifier:unfollowable`. */
  policyId: string;
  reason: string;
  /** What makes the action risky, one line each (shown to approvers). */
  risk: string[];
  /** The action's shape, for confirm-novel. */
  shape: string;
}

/** Facts from the run's log that decisions may depend on (folded, never taken from model text). */
export interface RunFacts {
  /** Shapes a person approved earlier in this run. */
  approvedShapes: ReadonlySet<string>;
}

export interface ApprovalPolicy {
  readonly mode: Mode;
  decide(request: PolicyRequest, facts?: RunFacts): Decision;
  /** The path rules the sandbox enforces in its file system (absent: none). */
  readonly paths?: PathDenial;
}
