import type { EventEnvelope, RunUsage } from '@gatehouse/shared';
import type { ApprovalChannel } from '../approval/channels/types';
import type { RequestState } from '../approval/state';
import type { StateTracker } from '../events/state';
import type { RunLog } from '../events/store';
import type { ExportResult } from '../loop/changes';
import type { LoopOutcome } from '../loop/loop';
import type { ApprovalPolicy } from '../policy/approval-policy';
import type { ModelProvider } from '../providers/types';
import type { Sandbox, SandboxBackend } from '../sandbox/index';
import type { LogPort } from '../tools/ports';
import type { ToolRegistry } from '../tools/registry';
import type { ToolLimits } from '../tools/tool';
import type { Budgets } from './budgets';
import type { ReadyEnvironment } from '../environment/prepare-environment';
import type { RepoTree } from './repo-tree';
import type { ResolvedConfig } from '../config/types';
import type { PriceInForce } from '../usage/model-price';
import type { LogReplica } from '../events/replica-port';
import type { RunMemory } from '../memory/memory-port';

/** How the stop reason of a run whose environment could not be prepared begins (exit code 5). */
export const SETUP_FAILED = 'setup_failed';

/** Where a run's logs get their replica: EventStore (store/index.ts) is one. */
export interface ReplicaSource {
  replicaFor(runId: string, o?: { lastStreamSeq?: number }): LogReplica;
}

/** What every run needs, new or resumed. */
export interface RunEnvironment {
  provider: ModelProvider;
  /** Where sandboxes come from: Docker's SandboxDriver today (sandbox/sandbox-backend.ts). */
  driver: SandboxBackend;
  stateDir: string;
  /** The approval gate (rules, mode, classifier) this run is held to. */
  policy: ApprovalPolicy;
  /** Where asks go; without one, an ask is denied. */
  channel?: ApprovalChannel;
  budgets: Budgets;
  /** The model's price and its source (usage/price-for.ts); absent: the cost is unknown. Sub-agents share it. */
  price?: PriceInForce;
  apply: boolean;
  signal: AbortSignal;
  limits?: Partial<ToolLimits>;
  contextTokenBudget?: number;
  /** Every event as it is written (live progress, --json). */
  onEvent?: (event: EventEnvelope) => void;
  onText?: (delta: string) => void;
  /**
   * A durable shared store every log of the run (sub-agents' too) is written through to (store/,
   * docs/event-store.md); absent: the state directory's JSONL only.
   */
  eventStore?: ReplicaSource;
  /** Called once the run's log is open, for parts that record on their own (refused approval answers). */
  attachLog?: (log: LogPort) => void;
  /** Where this agent sits in a tree of agents; a top-level run is depth 0 with every path. */
  agent?: { depth: number; maxDepth: number; paths: readonly string[]; maxParallel: number };
  /** Setup's output as it arrives, redacted (the live trace). */
  onSetupOutput?: (text: string, stream: 'stdout' | 'stderr') => void;
  /**
   * The environment prepared for this run's tree (run/environment.ts): sub-agents start from their
   * root's, never running setup again.
   */
  prepared?: ReadyEnvironment;
  /** The loaded policy's identity, for lineage events. */
  policyRecord?: { source: string; sha256: string; file: unknown };
  /**
   * Largest file checkpointed or exported (default: $GATEHOUSE_MAX_FILE_BYTES, else 8 GiB); larger ones are listed
   * with their sizes.
   */
  maxFileBytes?: number;
  /**
   * The project config (`--config`, the repository's `.gatehouse/config.json`, `--image`), resolved
   * and narrowed; its source, hash and ignored parts are recorded in run.started.
   */
  projectConfig?: ResolvedConfig;
  /**
   * `--setup-env` values: secrets for the setup phase only. Never logged, never given to the agent
   * phase, the model or a sub-agent.
   */
  setupEnv?: Readonly<Record<string, string>>;
  /**
   * Memory across runs (`--memory`, docs/memory.md): records recalled into a new run's context, and
   * the `remember` tool on its surface. Absent: neither.
   */
  memory?: RunMemory;
}

export interface AgentRunOptions extends RunEnvironment {
  task: string;
  repoDir: string;
  runId?: string;
  /** The --model spec as given (recorded so resume can recreate the provider). */
  modelSpec?: string;
  /** What the repository held at the start (run.started's `tree`; resume-repo.ts compares it). */
  repoTree?: RepoTree;
  /** `gatehouse plan`: plan, gate, then execute the approved plan exactly (plan/). */
  planMode?: boolean;
}

export interface AgentRunResult extends LoopOutcome {
  runId: string;
  runDir: string;
  repoDir: string;
  filesChanged: string[];
  diffFile?: string;
  applied: boolean;
  /** Changed files --apply refused (then nothing was written), files not exported, a write that failed part way. */
  refused?: ExportResult['refused'];
  skipped?: ExportResult['skipped'];
  applyError?: string;
  /** Requests the run waits for when it paused. */
  pendingRequests: RequestState[];
  /** The model usage of the run and its sub-agents, as run.completed records it (absent when paused). */
  usage?: RunUsage;
  /**
   * The run's sandbox was lost and the run is not over: its log is closed without an end, to be
   * resumed in a fresh sandbox (runAgent and resumeAgent do; run/sandbox-replacement.ts decides).
   */
  continueInFreshSandbox?: true;
}

/** Why a run is resumed: a person (or their queue) asked, or gatehouse replaces a lost sandbox itself. */
export interface ResumeCause {
  after: 'sandbox-lost';
}

export interface RunHandle {
  raw: RunLog;
  log: LogPort & { events(): readonly EventEnvelope[] };
  tracker: StateTracker;
  registry: ToolRegistry;
  surface: string[];
  task: string;
  repoDir: string;
  resume: boolean;
  /** Resume: puts the saved workspace into the fresh sandbox before the loop continues. */
  prepare?: (sandbox: Sandbox) => Promise<void>;
  /** Sub-agents: collects the sandbox's result before it is removed (the run's own end events follow). */
  finish?: (sandbox: Sandbox, outcome: LoopOutcome) => Promise<void>;
}

/**
 * Continues a stopped run by id (resume.ts). A run's sub-agents are resumed through it, and it is
 * handed to drive.ts rather than imported there: resuming drives the run again.
 */
export type ResumeRun = (
  runId: string,
  env: RunEnvironment,
  finishFor?: (log: LogPort & { events(): readonly EventEnvelope[] }) => RunHandle['finish'],
  cause?: ResumeCause,
) => Promise<AgentRunResult>;
