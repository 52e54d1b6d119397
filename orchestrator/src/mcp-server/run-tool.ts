import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { newId } from '@gatehouse/shared';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { eventsFile } from '../events/paths';
import { compilePolicy, DEFAULT_MODE } from '../policy/index';
import { loadShellClassifier } from '../policy/shell/index';
import { allowedPath } from './allowed-path';
import { combinedPolicy, ignoredByCombination } from './combined-policy';
import { runGatehouse, type ChildEnd } from './gatehouse-child';
import { narrowingPolicies } from './narrowing-policies';
import { progressSender, type ToolExtra } from './progress';
import { checkRepositoryPin, repositoryPin } from './repository-pin';
import { runArgs } from './run-args';
import { runOutcome } from './run-outcome';
import type { ServerState } from './server-state';
import { outcomeResult, toolError } from './tool-result';

/** Bounds on what a caller sends: a task is a prompt, not a payload; a path is a path. */
export const MAX_TASK = 20_000;
export const MAX_PATH = 4096;

/** No NUL or other control characters but tab and newline: a task goes on a command line and into the log. */
const printable = (s: string): boolean => !/[\u0000-\u0008\u000b-\u001f\u007f]/.test(s);

export const RunInput = {
  task: z
    .string()
    .min(1)
    .max(MAX_TASK)
    .refine(printable, 'the task may not hold control characters (other than tab and newline)')
    .describe('what the agent should do'),
  repository: z
    .string()
    .min(1)
    .max(MAX_PATH)
    .describe('absolute path of the repository to work on (copied into the sandbox; it is never changed)'),
  config: z
    .string()
    .min(1)
    .max(MAX_PATH)
    .optional()
    .describe("absolute path of a project config; it can only narrow the server's config and policy"),
};

/** The run tool: a sandboxed, audited run of the task on a copy of the repository; its outcome, answer and diff. */
export async function runTool(
  state: ServerState,
  input: { task: string; repository: string; config?: string | undefined },
  extra: ToolExtra,
): Promise<CallToolResult> {
  const runId = newId('run');
  const busy = state.reserve(runId);
  if (busy) return toolError(`no run was started: ${busy}`);
  try {
    return await startRun(state, runId, input, extra);
  } finally {
    state.live.delete(runId);
  }
}

async function startRun(
  state: ServerState,
  runId: string,
  input: { task: string; repository: string; config?: string | undefined },
  extra: ToolExtra,
): Promise<CallToolResult> {
  const s = state.settings;
  const repoDir = allowedPath(input.repository, s.roots, 'repository', s.privatePaths);
  // From here the run uses the real path checked above, and refuses it if it stops being that folder.
  const repoPin = repositoryPin(repoDir);
  const config = input.config === undefined ? undefined : allowedPath(input.config, s.roots, 'config', s.privatePaths);
  const classifier = await loadShellClassifier();
  const narrowing = narrowingPolicies(repoDir, config, classifier);
  checkRepositoryPin(repoDir, repoPin);
  const combined = combinedPolicy(
    s.policy,
    narrowing.map((n) => n.file),
  );
  const policyFile = path.join(s.workDir, `policy-${runId}.json`);
  // Checked as the run will check it, so a combination that fails is refused here, nothing started.
  compilePolicy(combined, `${s.policyFile} (combined)`, classifier);
  writeFileSync(policyFile, `${JSON.stringify(combined, null, 2)}\n`, { mode: 0o600 });
  const notes = [
    ...ignoredByCombination(narrowing, combined.mode),
    ...(combined.mode !== (s.policy.mode ?? DEFAULT_MODE) ? [`mode narrowed to ${combined.mode}`] : []),
  ];
  state.runs.set(runId, {
    runId,
    repository: repoDir,
    task: input.task.split('\n')[0]!.slice(0, 200),
    startedAt: new Date().toISOString(),
  });
  const end = await state.hold(runId, () =>
    runGatehouse(
      s.cli,
      runArgs({
        task: input.task,
        repoDir,
        repoPin,
        policyFile,
        stateDir: s.stateDir,
        runId,
        model: s.model,
        ...(s.config ? { config: s.config } : {}),
        ...(config ? { narrowConfig: config } : {}),
        ...(s.dockerHost ? { dockerHost: s.dockerHost } : {}),
        ...(s.memory ? { memory: s.memory } : {}),
      }),
      childOptions(state, runId, extra),
    ),
  );
  return finished(state, runId, end, notes);
}

/** How the server follows a run's child: progress to the caller, stderr to its own, cancelled with the call. */
export function childOptions(state: ServerState, runId: string, extra: ToolExtra) {
  const progress = progressSender(extra);
  return {
    signal: AbortSignal.any([extra.signal, state.stopping.signal]),
    onEvent: (e: { type: string; data: Record<string, unknown> }) => {
      const run = state.runs.get(runId);
      if (run) run.lastEvent = e.type;
      progress(e);
    },
    onStderr: (line: string) => void process.stderr.write(`gatehouse mcp: run ${runId}: ${line}\n`),
  };
}

/** The outcome of a run's child, from the run's log; a child that wrote no log says why it did not start. */
export function finished(state: ServerState, runId: string, end: ChildEnd, notes: readonly string[]): CallToolResult {
  if (!existsSync(eventsFile(state.settings.stateDir, runId))) {
    state.runs.delete(runId);
    const why = end.stderrTail.trim().replace(/^gatehouse: /gm, '') || `it exited with ${end.code ?? end.signal}`;
    return toolError(`the run did not start: ${why}`);
  }
  return outcomeResult(runOutcome(state.settings.stateDir, runId), notes);
}
