import { spawn } from 'node:child_process';
import type { EvalTask, TaskBudgets } from './suite-schema';

/** How one task's run ended, as the process that ran it saw it. */
export interface SpawnedRun {
  /** From the run's first event; null when the run never started (a usage error, no Docker). */
  runId: string | null;
  exitCode: number | null;
  /** The signal that ended the process, when one did. */
  signal: string | null;
  /** The end of what it wrote on stderr, for a run that did not start or ended strangely. */
  stderrTail: string;
  wallMs: number;
}

export interface TaskRunOptions {
  /** `--state-dir` for the run (default: where `gatehouse run` keeps runs of that repository). */
  stateDir?: string;
  /** Aborting sends the run SIGINT once: it cancels cleanly, its sandbox removed and its log completed. */
  signal?: AbortSignal;
}

/** Runs one task and reports how it ended. The CLI's: `gatehouse run` itself (cliTaskRunner). */
export type TaskRunner = (t: EvalTask, o: TaskRunOptions) => Promise<SpawnedRun>;

const STDERR_TAIL = 4000;

/** The flags each budget key of a suite becomes (the units of a config's `budgets`). */
function budgetArgs(b: TaskBudgets): string[] {
  return [
    ...(b.maxTurns !== undefined ? ['--max-turns', String(b.maxTurns)] : []),
    ...(b.maxToolCalls !== undefined ? ['--max-tool-calls', String(b.maxToolCalls)] : []),
    ...(b.maxTokens !== undefined ? ['--max-tokens', String(b.maxTokens)] : []),
    ...(b.wallClockSeconds !== undefined ? ['--max-wall', `${b.wallClockSeconds}s`] : []),
    ...(b.maxCostUsd !== undefined ? ['--max-cost', String(b.maxCostUsd)] : []),
  ];
}

/**
 * The `gatehouse run` command line of a task: headless (`--json`: no one is prompted, an ask pauses
 * the run), its check as `--check`, never `--apply` (the repository is only copied in). The task
 * text comes after `--`, so one that starts with a dash is not read as a flag.
 */
export function runArgs(t: EvalTask, o: Pick<TaskRunOptions, 'stateDir'> = {}): string[] {
  return [
    'run',
    '--repo',
    t.repository,
    '--model',
    t.model,
    '--check',
    t.check,
    '--on-ask',
    'pause',
    '--json',
    ...(t.config !== undefined ? ['--config', t.config] : []),
    ...(t.policy !== undefined ? ['--policy', t.policy] : []),
    ...budgetArgs(t.budgets),
    ...(o.stateDir !== undefined ? ['--state-dir', o.stateDir] : []),
    '--',
    t.task,
  ];
}

/**
 * Each task is a real `gatehouse run`, the same command a person types, in a process of its own:
 * one run's output, signals and exit code never mix with another's when several run at once.
 * `command` is how to start the CLI (node and its entry script). The process is its own process
 * group, so a Ctrl-C at the terminal reaches only eval, which passes one SIGINT on (a second one
 * would make the run quit without cleaning up).
 */
export function cliTaskRunner(command: { node: string; args: string[] }): TaskRunner {
  return (t, o) =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const child = spawn(command.node, [...command.args, ...runArgs(t, o)], {
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let runId: string | null = null;
      let firstLine = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        if (runId !== null || firstLine.includes('\n')) return;
        firstLine += chunk;
        const end = firstLine.indexOf('\n');
        if (end >= 0) runId = runIdOf(firstLine.slice(0, end));
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-STDERR_TAIL);
      });
      const cancel = (): void => void child.kill('SIGINT');
      o.signal?.addEventListener('abort', cancel, { once: true });
      child.on('error', (e) => {
        o.signal?.removeEventListener('abort', cancel);
        reject(e);
      });
      child.on('close', (code, signal) => {
        o.signal?.removeEventListener('abort', cancel);
        resolve({
          runId,
          exitCode: code,
          signal,
          stderrTail: stderr,
          wallMs: Math.round(performance.now() - started),
        });
      });
    });
}

/** The run id from the first event line (`run.started`), if it is one. */
function runIdOf(line: string): string | null {
  try {
    const e = JSON.parse(line) as { runId?: unknown };
    return typeof e.runId === 'string' ? e.runId : null;
  } catch {
    return null;
  }
}
