import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { RunLog } from '../events/store';
import { lastEvent, StateTracker } from '../events/state';
import type { Sandbox } from '../sandbox/index';
import { codingTools } from '../tools/builtin/index';
import { drive, tee, type AgentRunResult, type RunEnvironment, type RunHandle } from './session';
import type { LogPort } from '../tools/ports';
import { restoreWorkspace, snapshotWorkspace, type WorkspaceSnapshot } from './workspace';

export class ResumeError extends Error {}

/**
 * Continues a stopped run — paused for approval, or cut short by a crash — from its log: a fresh
 * sandbox made from the same repository with the run's workspace put back, then the loop from the
 * last durable step. Pending actions run only with a grant from the log, and nothing whose
 * execution started is run again (see ToolPipeline.continueCall).
 */
export async function resumeAgent(runId: string, o: RunEnvironment, finishFor?: (log: LogPort & { events(): readonly EventEnvelope[] }) => RunHandle['finish']): Promise<AgentRunResult> {
  const { log: raw } = RunLog.open(o.stateDir, runId);
  let handed = false;
  try {
    const events = raw.events();
    const tracker = new StateTracker(events);
    const state = tracker.state;
    const started = events[0]?.type === 'run.started' ? (events[0].data as EventDataOf<'run.started'>) : undefined;
    if (!started?.repo) throw new ResumeError(`run ${runId} has no run.started event with a repository; it cannot be resumed`);
    if (state.status !== 'running') throw new ResumeError(`run ${runId} already ended (${state.status}: ${state.stopReason ?? ''}); there is nothing to resume`);
    const repoDir = started.repo;
    const registry = codingTools();
    const surface = [...started.surface];
    const log = tee(raw, tracker, o.onEvent);
    for (const e of events) o.onEvent?.(e);

    // The workspace to restore: a sandbox the dead orchestrator left running holds the newest
    // state (effects of an action whose completion never reached the log); else the snapshot the
    // last pause saved; else the repository as it is.
    let from: EventDataOf<'run.resumed'>['workspaceFrom'] = 'repository';
    let snapshot: WorkspaceSnapshot = { dir: null, files: [], deleted: [] };
    const orphan = await o.driver.adoptOrphan(runId);
    if (orphan) {
      try {
        snapshot = await snapshotWorkspace(orphan, raw.runDir, `salvaged-seq-${state.lastSeq + 1}`);
        from = 'previous-sandbox';
      } finally {
        await orphan.destroy();
      }
    } else {
      const paused = lastEvent(events, 'run.paused');
      if (paused) {
        snapshot = (paused.data as EventDataOf<'run.paused'>).workspace;
        from = 'pause-snapshot';
      }
    }
    handed = true;
    return await drive(o, {
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
        await restoreWorkspace(sandbox, raw.runDir, snapshot);
        log.append('run.resumed', 'user', { fromSeq: state.lastSeq, workspaceFrom: from, files: [...snapshot.files, ...snapshot.deleted] });
      },
    });
  } finally {
    if (!handed) raw.close();
  }
}

