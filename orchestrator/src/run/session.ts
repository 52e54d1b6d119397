import { newId } from '@gatehouse/shared';
import { StateTracker } from '../events/state';
import { RunLog } from '../events/store';
import { codingTools } from '../tools/builtin/index';
import { resolveSurface } from '../tools/registry';
import { drive } from './drive';
import { resumeAgent } from './resume';
import { runRedactor } from './run-redactor';
import { tee } from './tee';
import type { AgentRunOptions, AgentRunResult } from './types';
import { recordedEnvironment } from './recorded-environment';
import { recallForRun } from '../memory/recall-for-run';

/**
 * One agent run from start to end: its log, its sandbox (a copy of the repository), the pipeline
 * and the loop. The log is written whatever happens, and the sandbox is removed whatever happens.
 */
export async function runAgent(o: AgentRunOptions): Promise<AgentRunResult> {
  const runId = o.runId ?? newId('run');
  const registry = codingTools();
  const surface = resolveSurface(registry, {
    mode: o.policy.mode,
    plan: o.planMode === true,
    memory: o.memory !== undefined,
  });
  const raw = RunLog.create(o.stateDir, runId, {
    redactor: runRedactor(o),
    ...(o.eventStore ? { replica: o.eventStore.replicaFor(runId, { lastStreamSeq: 0 }) } : {}),
  });
  const tracker = new StateTracker();
  const log = tee(raw, tracker, o.onEvent);
  log.append('run.started', 'user', {
    task: o.task,
    mode: o.policy.mode,
    surface,
    repo: o.repoDir,
    model: o.modelSpec ?? o.provider.id,
    ...(o.policyRecord ? { policy: o.policyRecord } : {}),
    lineage: [runId],
    ...(o.repoTree ? { tree: o.repoTree } : {}),
    ...(o.planMode ? { planMode: true as const } : {}),
    budgets: { ...o.budgets },
    ...(o.price ? { price: { ...o.price, source: o.price.source.slice(0, 1024) } } : {}),
    ...(o.projectConfig
      ? {
          config: {
            source: o.projectConfig.source,
            sha256: o.projectConfig.sha256,
            ignored: o.projectConfig.ignored,
            environment: recordedEnvironment(o.projectConfig, Object.keys(o.setupEnv ?? {})),
          },
        }
      : {}),
  });
  // What memory recalls is on record before the first turn: the context and replay are built from it.
  if (o.memory) log.append('memory.recalled', 'runtime', recallForRun(o.memory, o.task));
  // With a store, the run is on record there (events and head) before anything is prepared: a worker
  // that dies from here on leaves a run another worker can continue rather than one it must refuse.
  if (o.eventStore) await raw.flush();
  const result = await drive(o, resumeAgent, {
    raw,
    log,
    tracker,
    registry,
    surface,
    task: o.task,
    repoDir: o.repoDir,
    resume: false,
  });
  // Its sandbox was lost and the run goes on: resumed in a fresh one, from its last checkpoint.
  return result.continueInFreshSandbox ? resumeAgent(runId, o, undefined, { after: 'sandbox-lost' }) : result;
}
