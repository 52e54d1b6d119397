import type { PathDenial } from './path-denial';
import type { Mode } from './mode';

/**
 * The approval gate's interface: what it is asked about (a validated call), the facts from the
 * run it may use, and what it answers. The engine (engine.ts) implements it; the pipeline, the
 * sub-agent narrowing and the export of changes depend only on this.
 */

/** What an action can touch; the approval stage decides on it. */
export type SideEffect = 'read' | 'write' | 'execute' | 'network' | 'delegate';

/** What the approval stage is asked about: a validated call. */
export interface PolicyRequest {
  tool: string;
  input: unknown;
  readOnly: boolean;
  sideEffect: SideEffect;
  /** What the tool's own definition claims (MCP annotations): may make a decision stricter, never looser. */
  hints?: ToolHints;
}

/** An MCP server's annotations as the policy reads them (docs/mcp.md): only ever toward asking. */
export interface ToolHints {
  destructive?: boolean;
  openWorld?: boolean;
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
