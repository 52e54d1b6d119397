/** What one `gatehouse run` child is started with. */
export interface RunChildSpec {
  task: string;
  repoDir: string;
  /** The combined policy (combined-policy.ts), written for this run. */
  policyFile: string;
  stateDir: string;
  runId: string;
  model: string;
  /** The server's trusted config. */
  config?: string;
  /** The caller's config: it can only narrow (`gatehouse run --narrow-config`). */
  narrowConfig?: string;
  dockerHost?: string;
  /** The repository's folder as the server checked it (repository-pin.ts): the run refuses another. */
  repoPin?: string;
  /** The server's `--memory` (serve-settings.ts), never the caller's. */
  memory?: { tokenBudget?: number };
}

/**
 * The command line of a run's child. Headless (`--json --on-ask pause`: an ask pauses the run for
 * the approve tool), never `--apply` (the caller gets the diff; the repository is untouched), and
 * the task after `--`, so a task that looks like a flag (`--apply`) stays a task.
 */
export function runArgs(s: RunChildSpec): string[] {
  return [
    'run',
    '--model',
    s.model,
    '--repo',
    s.repoDir,
    ...(s.repoPin ? ['--repo-pin', s.repoPin] : []),
    '--policy',
    s.policyFile,
    '--state-dir',
    s.stateDir,
    '--run-id',
    s.runId,
    '--json',
    '--on-ask',
    'pause',
    ...(s.config ? ['--config', s.config] : []),
    ...(s.narrowConfig ? ['--narrow-config', s.narrowConfig] : []),
    ...(s.dockerHost ? ['--docker-host', s.dockerHost] : []),
    ...(s.memory ? ['--memory'] : []),
    ...(s.memory?.tokenBudget !== undefined ? ['--memory-budget', String(s.memory.tokenBudget)] : []),
    '--',
    s.task,
  ];
}

/**
 * The command line that continues a paused run of the server's once its approvals are answered,
 * with the server's trusted config again (its MCP servers' values, which the run's log does not keep).
 */
export function resumeArgs(runId: string, stateDir: string, dockerHost?: string, config?: string): string[] {
  return [
    'resume',
    runId,
    '--state-dir',
    stateDir,
    '--json',
    '--on-ask',
    'pause',
    ...(config ? ['--config', config] : []),
    ...(dockerHost ? ['--docker-host', dockerHost] : []),
  ];
}
