import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { newId, type Actor, type EventDataOf, type EventEnvelope, type EventType } from '@gatehouse/shared';
import type { Budgets } from '../context/system';
import { systemPrompt } from '../context/system';
import { RunLog } from '../events/store';
import { StateTracker } from '../events/state';
import type { Mode } from '../policy/interim';
import { interimPolicy } from '../policy/interim';
import type { ModelProvider } from '../providers/types';
import type { SandboxDriver } from '../sandbox/driver';
import { codingTools } from '../tools/builtin/index';
import { ToolPipeline } from '../tools/pipeline';
import type { LogPort } from '../tools/ports';
import { resolveSurface } from '../tools/registry';
import type { ToolLimits } from '../tools/tool';
import { runLoop, type LoopOutcome } from './loop';

const run = promisify(execFile);

export interface AgentRunOptions {
  task: string;
  repoDir: string;
  provider: ModelProvider;
  driver: SandboxDriver;
  stateDir: string;
  mode: Mode;
  budgets: Budgets;
  apply: boolean;
  signal: AbortSignal;
  runId?: string;
  limits?: Partial<ToolLimits>;
  contextTokenBudget?: number;
  /** Every event as it is written (live progress, --json). */
  onEvent?: (event: EventEnvelope) => void;
  onText?: (delta: string) => void;
}

export interface AgentRunResult extends LoopOutcome {
  runId: string;
  runDir: string;
  filesChanged: string[];
  diffFile?: string;
  applied: boolean;
}

export const DEFAULT_LIMITS: ToolLimits = { defaultTimeoutMs: 120_000, maxTimeoutMs: 600_000, observationBudget: 16_000, maxReadLines: 2000 };

/**
 * One agent run from start to end: its log, its sandbox (a copy of the repository), the pipeline
 * and the loop; then the diff, saved beside the log and applied to the repository only if asked.
 * The log is written whatever happens, and the sandbox is removed whatever happens.
 */
export async function runAgent(o: AgentRunOptions): Promise<AgentRunResult> {
  const runId = o.runId ?? newId('run');
  const registry = codingTools();
  const surface = resolveSurface(registry, { mode: o.mode });
  const raw = RunLog.create(o.stateDir, runId);
  const tracker = new StateTracker();
  const log = tee(raw, tracker, o.onEvent);
  log.append('run.started', 'user', { task: o.task, mode: o.mode, surface, repo: o.repoDir, model: o.provider.id });

  const finish = (outcome: LoopOutcome, extra: Partial<AgentRunResult> = {}): AgentRunResult => {
    const result: AgentRunResult = { ...outcome, runId, runDir: raw.runDir, filesChanged: [], applied: false, ...extra };
    log.append('run.completed', 'runtime', {
      status: result.status,
      stopReason: result.stopReason,
      ...(result.answer !== undefined ? { answer: result.answer } : {}),
      filesChanged: result.filesChanged,
      applied: result.applied,
      ...(result.diffFile ? { diffFile: path.basename(result.diffFile) } : {}),
    });
    raw.sync();
    raw.close();
    return result;
  };

  let sandbox;
  try {
    // When runs are kept inside the repository (`--repo .`), earlier runs' logs stay out of the sandbox.
    const state = path.relative(o.repoDir, o.stateDir);
    const inside = state !== '' && !state.startsWith('..') && !path.isAbsolute(state);
    sandbox = await o.driver.createSandbox({ runId, repoDir: o.repoDir, ...(inside ? { ignore: (rel: string) => rel === state || rel.startsWith(`${state}/`) } : {}) });
  } catch (e) {
    return finish({ status: 'failed', stopReason: `sandbox_failed: ${(e as Error).message}` });
  }
  const lost = new AbortController();
  const signal = AbortSignal.any([o.signal, lost.signal]);
  try {
    log.append('sandbox.started', 'runtime', { sandboxId: sandbox.sandboxId, containerId: sandbox.info.containerId, image: o.driver.images.sandbox, timings: sandbox.info.timings });
    sandbox.onLost((e) => {
      log.append('sandbox.lost', 'sandbox', { sandboxId: sandbox.sandboxId, reason: e.reason });
      lost.abort();
    });
    const limits = { ...DEFAULT_LIMITS, ...o.limits };
    const pipeline = new ToolPipeline({ log, tracker, registry, surface, policy: interimPolicy(o.mode), sandbox, limits });
    const outcome = await runLoop({
      provider: o.provider,
      log,
      tracker,
      pipeline,
      system: systemPrompt(o.budgets),
      task: o.task,
      tools: registry.describe(surface),
      budgets: o.budgets,
      contextTokenBudget: o.contextTokenBudget ?? 100_000,
      signal,
      ...(o.onText ? { onText: o.onText } : {}),
    });
    if (sandbox.lost) return finish({ status: 'failed', stopReason: `sandbox_lost: ${sandbox.lost.reason}` });
    const changes = await exportChanges(sandbox, raw.runDir, o.repoDir, o.apply && outcome.status === 'final');
    return finish(outcome, changes);
  } catch (e) {
    return finish({ status: 'failed', stopReason: `internal_error: ${(e as Error).message}` });
  } finally {
    await sandbox.destroy().catch(() => undefined);
  }
}

/**
 * The sandbox's changes as a git diff saved beside the log; written back to the repository only
 * when asked, and only for a run that ended with an accepted final answer.
 */
async function exportChanges(
  sandbox: Awaited<ReturnType<SandboxDriver['createSandbox']>>,
  runDir: string,
  repoDir: string,
  apply: boolean,
): Promise<Pick<AgentRunResult, 'filesChanged' | 'diffFile' | 'applied'>> {
  const changes = await sandbox.changes();
  const filesChanged = changes.files.map((f) => f.path);
  if (filesChanged.length === 0) return { filesChanged, applied: false };
  const diffFile = path.join(runDir, 'changes.diff');
  if (changes.truncated) {
    // Too big for a message: copy the files out instead, beside the log.
    await sandbox.exportFiles(changes.files.filter((f) => f.status !== 'deleted').map((f) => f.path), path.join(runDir, 'changed-files'));
    return { filesChanged, applied: false };
  }
  await fs.writeFile(diffFile, changes.diff);
  if (!apply) return { filesChanged, diffFile, applied: false };
  // The ceiling keeps git from finding an enclosing repository, so paths are relative to repoDir
  // whether or not it is a repository of its own.
  await run('git', ['apply', '--binary', '--whitespace=nowarn', diffFile], { cwd: repoDir, env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(repoDir) } });
  return { filesChanged, diffFile, applied: true };
}

/** The log as the pipeline and loop see it: every append also folds into state and is reported. */
function tee(log: RunLog, tracker: StateTracker, onEvent?: (e: EventEnvelope) => void): LogPort & { events(): readonly EventEnvelope[] } {
  return {
    append<T extends EventType>(type: T, actor: Actor, data: EventDataOf<T>, opts?: { causationId?: string | null }) {
      const event = log.append(type, actor, data, opts);
      tracker.apply(event);
      onEvent?.(event);
      return event;
    },
    sync: () => log.sync(),
    redact: (text) => log.redact(text),
    artifacts: log.artifacts,
    events: () => log.events(),
  };
}
