import type { z } from 'zod';
import type { InvocationResult, PrimitiveInput, PrimitiveName, ValidationError } from '@gatehouse/shared';
import type { RunState } from '../events/state';
import type { AgentScope, Handoff } from '../agents/handoff';
import type { WorkspacePathRef } from './workspace-paths';
import type { MemoryPort, RememberProposal } from '../memory/memory-port';

import type { SideEffect, ToolHints } from '../policy/approval-policy';
export type { SideEffect, ToolHints };

/** What the pipeline hands a tool: run state (a fold of the log) and read-only access for checks. */
export interface ToolContext {
  state: RunState;
  /** Reads a workspace file for semantic checks; never changes anything. */
  peek(path: string): Promise<PeekResult>;
  limits: ToolLimits;
  /** What this agent may hand to a sub-agent (its tools, paths, budget left, depth); absent where delegation is off. */
  agent?: () => AgentScope;
  /**
   * Where a path of this call resolved (workspace-relative, symlinks resolved) when the policy
   * decided on it; plans pass it on so the daemon refuses the call if the path moved meanwhile.
   */
  realPath?(path: string): string | undefined;
  /** Who proposed the call: the model, or gatehouse itself (its run of the check that decides a run). */
  actor?: 'model' | 'runtime';
  /** Memory across runs (`--memory`): checks a `remember` call's citations against this run's log. */
  memory?: Pick<MemoryPort, 'check'>;
}

export type PeekResult = { exists: false } | { exists: true; isDirectory: boolean; sha256?: string; content?: string };

export interface ToolLimits {
  /** Default and ceiling for bash timeouts, in milliseconds. */
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  /** Characters of output the model sees before head/tail truncation. */
  observationBudget: number;
  /** Hard cap on lines one read_file returns. */
  maxReadLines: number;
}

/** How a validated call executes: a sandbox primitive, or work the orchestrator does itself. */
export type ExecutionPlan =
  | {
      executor: 'sandbox';
      primitive: PrimitiveName;
      input: PrimitiveInput<PrimitiveName>;
      timeoutMs: number;
      note?: string;
    }
  | {
      executor: 'orchestrator';
      primitive: string;
      input: unknown;
      timeoutMs: number;
      run: (io: OrchestratorIO) => Promise<LocalResult>;
    };

export interface OrchestratorIO {
  /** What authorised this execution (the approval event and who gave it), for work that invokes the sandbox itself. */
  approval?: { id: string; by: 'policy' | 'user' };
  /** Runs a sub-agent on a checked handoff and brings its result back (see agents/delegation.ts). */
  delegate?(handoff: Handoff): Promise<LocalResult>;
  /** Stores a `remember` call's record once it is granted (memory/memory-port.ts); absent when memory is off. */
  remember?(proposal: RememberProposal): LocalResult;
  readArtifact(
    ref: string,
    offset: number,
    limit: number,
  ): { text: string; offset: number; bytes: number; totalBytes: number; eof: boolean };
}

export interface LocalResult {
  ok: boolean;
  output: string;
  error?: { code: string; message: string };
  /** Not done yet: a sub-agent waits for this approval request (in its own run). */
  pending?: { runId: string; requestId: string };
}

/** A raw result from either executor, as the observation step sees it. */
export type RawResult =
  | {
      executor: 'sandbox';
      result: InvocationResult;
      fullOutput?: string;
      /** Set when no result came back (sandbox lost). */ lost?: string;
    }
  | { executor: 'orchestrator'; result: LocalResult };

export interface Observed {
  ok: boolean;
  /** The text the model sees (before sanitising, framing and truncation). */
  text: string;
  /** File hashes this call established (read baseline, own write or edit). */
  fileHashes?: Record<string, string>;
  /** Whether the text is content from outside the harness (files, command output): framed as untrusted. */
  external: boolean;
  /** Where external content came from, said in its frame (default: the workspace or a command). */
  origin?: string;
}

/**
 * A tool is a protocol, not a function: what it accepts, what it touches, how it is checked
 * against run state, how it runs, and how its result becomes what the model sees. Permission is
 * not here: the pipeline's approval stage decides that for every tool alike.
 */
export interface Tool<I = unknown> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  sideEffect: SideEffect;
  /** The JSON schema the model is shown, where it is not generated from `input` (an MCP server's own). */
  inputSchema?: unknown;
  /** The tool's own claims (MCP annotations), which the policy may use only to be stricter. */
  hints?: ToolHints;
  isReadOnly(input: I): boolean;
  /**
   * The workspace paths the call names: each must stay inside the workspace, and (where `resolve`)
   * the policy also decides on where it really leads.
   */
  workspacePaths?(input: I): WorkspacePathRef[];
  /** Semantic checks against run state; an empty list means valid. */
  validate?(input: I, ctx: ToolContext): Promise<ValidationError[]>;
  plan(input: I, ctx: ToolContext): ExecutionPlan;
  observe(input: I, raw: RawResult, ctx: ToolContext): Observed;
}

export type AnyTool = Tool<never>;

export function defineTool<I>(tool: Tool<I>): Tool<I> {
  return tool;
}

export function semanticError(path: string, code: string, message: string): ValidationError {
  return { path, code, message };
}
