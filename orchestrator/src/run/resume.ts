import type { EventEnvelope } from '@gatehouse/shared';
import { LogKey } from '../events/key';
import { GatehouseError } from '../errors';
import { RunLog } from '../events/store';
import { StateTracker } from '../events/state';
import type { Sandbox } from '../sandbox/index';
import { restoreSaved } from '../sandbox/workspace-save';
import { codingTools } from '../tools/builtin/index';
import { drive } from './drive';
import { runRedactor } from './run-redactor';
import { tee } from './tee';
import type { AgentRunResult, ResumeCause, RunEnvironment, RunHandle } from './types';
import type { LogPort } from '../tools/ports';
import { chooseWorkspace } from './restore-point';

/** The run cannot be continued (it already ended, is a sub-agent, or lacks what resuming needs): nothing ran. */
export class ResumeError extends GatehouseError {
  readonly kind = 'refused';
}

/**
 * Continues a stopped run — paused for approval, cut short by a crash, or stopped on a budget —
 * from its log: a fresh sandbox made from the same repository with the run's workspace put back, then the loop from the
 * last durable step. Pending actions run only with a grant from the log, and nothing whose
 * execution started is run again (see ToolPipeline.continueCall).
 *
 * The workspace comes from the run's own records: what the reaper saved from the dead
 * orchestrator's sandbox when that is newer than anything in the log, else the last checkpoint.
 * When the writes the log says completed cannot be put back, resume refuses: it never continues on
 * a workspace silently missing them.
 */
export async function resumeAgent(
  runId: string,
  o: RunEnvironment,
  finishFor?: (log: LogPort & { events(): readonly EventEnvelope[] }) => RunHandle['finish'],
  cause?: ResumeCause,
): Promise<AgentRunResult> {
  // With a store, the replica continues from the stream's last event, which must be this log's last.
  const { log: raw } = RunLog.open(o.stateDir, runId, {
    redactor: runRedactor(o),
    ...(o.eventStore ? { replica: o.eventStore.replicaFor(runId) } : {}),
  });
  let handed = false;
  try {
    const events = raw.events();
    const tracker = new StateTracker(events);
    const state = tracker.state;
    const started = events[0]?.type === 'run.started' ? events[0].data : undefined;
    if (!started?.repo)
      throw new ResumeError(`run ${runId} has no run.started event with a repository; it cannot be resumed`);
    // A run that stopped on a budget kept its work and can go on with more (docs/runs.md); any other end is final.
    const overBudget = state.status === 'partial' && state.decidedBy === 'budget';
    if (state.status !== 'running' && !overBudget)
      throw new ResumeError(
        `run ${runId} already ended (${state.status}: ${state.stopReason ?? ''}); there is nothing to resume`,
      );
    const repoDir = started.repo;
    const registry = codingTools();
    const surface = [...started.surface];

    // The dead orchestrator's sandbox, if still there, is saved into the run's folder and removed.
    await o.driver.reapRun(o.stateDir, runId);
    const restore = await chooseWorkspace(raw.runDir, events, registry, LogKey.load({ stateDir: o.stateDir }));
    if ('refusal' in restore) throw new ResumeError(restore.refusal);
    // Not an error (nothing the log says completed is lost), but someone should know.
    if (restore.ignored)
      process.emitWarning(`${restore.ignored}; the run continues from ${restore.from}`, 'GatehouseWarning');

    const log = tee(raw, tracker, o.onEvent);
    // Continued in this process (a lost sandbox replaced), the watcher has seen every event already.
    if (!cause) for (const e of events) o.onEvent?.(e);
    handed = true;
    const result = await drive(o, resumeAgent, {
      raw,
      log,
      tracker,
      registry,
      surface,
      task: started.task,
      repoDir,
      resume: true,
      ...(finishFor ? { finish: finishFor(log) } : {}),
      prepare: async (sandbox: Sandbox) => {
        if (restore.manifest) await restoreSaved(sandbox, raw.runDir, restore.manifest);
        else if (restore.legacy) await restore.legacy(sandbox);
        // Gatehouse's own resume (a lost sandbox replaced) is the runtime's; anyone else's is a person's.
        log.append('run.resumed', cause ? 'runtime' : 'user', {
          fromSeq: state.lastSeq,
          workspaceFrom: restore.from,
          files: restore.files,
          budgets: { ...o.budgets },
        });
      },
    });
    return result.continueInFreshSandbox ? await resumeAgent(runId, o, finishFor, { after: 'sandbox-lost' }) : result;
  } finally {
    if (!handed) raw.close();
  }
}
