import type { EventEnvelope, EventOf } from '@gatehouse/shared';
import type { ResumeRun, RunEnvironment, RunHandle, AgentRunResult } from '../run/types';
import type { LoopOutcome } from '../loop/loop';
import type { WorkspaceFiles } from '../loop/workspace';
import type { CallResult, ToolCall } from '../tools/pipeline';
import type { LogPort } from '../tools/ports';
import type { AgentScope } from './handoff';

/**
 * A child's run handle: its hooks only copy files in and out, so any sandbox with the file
 * transfer will do (drive.ts gives a real one; the unit tests an in-memory one).
 */
export type ChildRunHandle = Omit<RunHandle, 'prepare' | 'finish'> & {
  prepare?: (sandbox: WorkspaceFiles) => Promise<void>;
  finish?: (sandbox: WorkspaceFiles, outcome: LoopOutcome) => Promise<void>;
};

/**
 * What the delegator is given of the run it belongs to: the child runs are started, resumed and concluded against
 * it.
 */
export interface ParentRun {
  env: RunEnvironment;
  runId: string;
  lineage: readonly string[];
  depth: number;
  maxDepth: number;
  maxParallel: number;
  repoDir: string;
  log: LogPort & { events(): readonly EventEnvelope[] };
  /** The parent's sandbox, whose workspace is handed over as it is now. */
  sandbox: WorkspaceFiles;
  /** The parent's own pipeline: the only way a child's changes reach the parent's workspace. */
  run: (call: ToolCall) => Promise<CallResult>;
  drive: (env: RunEnvironment, h: ChildRunHandle) => Promise<AgentRunResult>;
  /** The parent's run folder (its children's folders are its siblings). */
  runDir: string;
  /** What this agent may still hand down (its budget minus what it used and already handed out). */
  scope: () => AgentScope;
  /** Resumes a run by id with a finish hook built once its log is open (run/resume.ts). */
  resume?: ResumeRun;
}

/** This run's own children (a child's log also holds the record of its own spawn). */
export function spawnedBy(e: EventEnvelope, runId: string): e is EventOf<'agent.spawned'> {
  return e.type === 'agent.spawned' && e.data.parentRunId === runId;
}
