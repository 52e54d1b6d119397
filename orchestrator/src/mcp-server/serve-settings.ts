import type { PolicyFile } from '../policy/index';

/** How `gatehouse mcp serve` was started: everything a caller cannot change. */
export interface ServeSettings {
  /** The gatehouse CLI each run's child process starts (this process's own entry). */
  cli: string;
  /** The model every run uses (`--model`): the caller does not choose what it costs. */
  model: string;
  /** `--policy FILE` as given, and its contents as validated at start. */
  policyFile: string;
  policy: PolicyFile;
  /** `--config FILE`: the trusted project config; a caller's config can only narrow it. */
  config?: string;
  /** Real paths of the folders whose repositories and configs the server accepts (`--root`; default: the cwd). */
  roots: string[];
  /** Where the server's runs are kept (the flat layout, DIR/runs/<id>); status and approve see only these. */
  stateDir: string;
  /** Runs (and resumes) going at once (`--max-runs`); a call beyond is refused, not queued. */
  maxRuns: number;
  dockerHost?: string;
  /**
   * `--memory [--memory-budget N]`: every run recalls and may propose memory (docs/memory.md), in
   * the server's state directory. Only the operator turns it on; no caller input reaches it.
   */
  memory?: { tokenBudget?: number };
  /** The log key, its heads, the state directories and workDir: never a caller's repository or config. */
  privatePaths: string[];
  /** A private folder (0700) for the combined policy files handed to each run. */
  workDir: string;
}
