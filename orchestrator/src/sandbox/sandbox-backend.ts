import type { Id } from '@gatehouse/shared';
import type { PathDenial } from '../policy/path-denial';
import type { SandboxLimits } from './container';
import type { EgressProxyOptions } from './egress-proxy';
import type { Sandbox } from './sandbox';
import type { WorkspaceImageOptions, WorkspaceImageReport } from './workspace-image';

export interface CreateSandboxOptions {
  runId: Id;
  sandboxId?: Id;
  /** Host directory copied into /workspace (with .git). Omit for an empty workspace. */
  repoDir?: string;
  /** Paths (relative to repoDir) to leave out of the copy, unreported (the state directory). */
  ignore?: (relPath: string) => boolean;
  /** The project config's `copy`: globs never copied, and ignored paths copied all the same. */
  copy?: { exclude?: string[]; include?: string[] };
  /**
   * The policy's path rules, enforced by the file system: what is denied for reading is not copied
   * in, what is denied for writing is made root-owned (read-only to commands) before anything runs.
   */
  pathRules?: PathDenial;
  limits?: Partial<SandboxLimits>;
  /**
   * The run image to start (ensureRunImage(resolveToolchainImage(spec))); default: the driver's
   * default sandbox, derived from preset:node.
   */
  image?: string;
  /** Where the run's log lives: a label, so a reaper in any process saves the orphan's workspace there. */
  stateDir?: string;
  /**
   * false: if the orchestrator dies, the reaper removes this sandbox without saving its workspace
   * (setup's sandbox, whose files may hold what setup wrote with its secrets).
   */
  salvage?: boolean;
  /**
   * A way out through a per-run egress proxy allowing exactly these hosts (docs/egress.md); without
   * it the sandbox reaches nothing. Every command gets the proxy settings.
   */
  egress?: Pick<EgressProxyOptions, 'phase' | 'allow' | 'deny' | 'onDecision' | 'onProblem'>;
}

/**
 * Where a run's sandboxes come from: everything the run (run/, agents/, environment setup) asks of
 * it. Docker is the one backend today (SandboxDriver, one engine per process, local or remote
 * through --docker-host); a Kubernetes backend would be another implementation of this interface,
 * with a pod per sandbox. What is still Docker's below this line: a Sandbox moves files through
 * the container's archive API (copy-in, checkpoints, restore), which such a backend would do with
 * tar streams over its own exec or copy API (docs/scaling.md).
 */
export interface SandboxBackend {
  /** The image a sandbox starts from when a run names none. */
  readonly images: { readonly sandbox: string };
  createSandbox(opts: CreateSandboxOptions): Promise<Sandbox>;
  /** The content id of an image by tag: a run records which build of its image it ran on. */
  imageId(tag: string): Promise<string>;
  imageExists(tag: string): Promise<boolean>;
  /** An image of what setup left in a sandbox's workspace (the environment cache). */
  imageFromWorkspace(sandbox: Sandbox, o: WorkspaceImageOptions): Promise<WorkspaceImageReport>;
  /** A run's sandboxes a dead orchestrator left: each workspace saved into the run's state directory, then removed. */
  reapRun(stateDir: string, runId: string): Promise<void>;
  close(): Promise<void>;
}
