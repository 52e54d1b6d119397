import type { ToolPipeline } from '../tools/pipeline';
import type { PipelineDeps } from '../tools/pipeline/types';
import type { RecoveryStep, TaskFailure } from './plan-types';

/** What the plan driver hands recovery (plan/plan-failures.ts is the one call site). */
export interface RecoveryDeps {
  /** The tool pipeline's deps: log, tracker, channel, lineage (requestApproval takes them for escalations). */
  tools: PipelineDeps;
  /** Runs a retried call again through the pipeline (as proposed, with its taskId). */
  pipeline: Pick<ToolPipeline, 'run' | 'continueCall'>;
  /** The project config's `recovery` section, as loaded (absent: the spec's defaults). */
  config?: unknown;
}

/**
 * STAND-IN (plan-driver branch) until plan-recovery's recover.ts lands: on merge, take plan-recovery's.
 * Classifies nothing and recovers nothing: every failure fails its task.
 */
export function recoverTask(failure: TaskFailure, _deps: RecoveryDeps, _signal: AbortSignal): Promise<RecoveryStep> {
  const f = failure.failure;
  const why =
    f.kind === 'check'
      ? `the check \`${f.command}\` exited ${f.exitCode ?? f.status ?? 'without an exit code'}`
      : f.kind === 'summary'
        ? `the summary was refused: ${f.reason}`
        : `${f.tool} ${f.outcome}: ${f.content.slice(0, 300)}`;
  return Promise.resolve({ kind: 'fail', error: why });
}
