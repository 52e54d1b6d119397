import type { CallState } from '../../approval/state';
import { continueApproval } from '../../approval/continue-approval';
import { checkWorkspacePaths } from '../workspace-paths';
import type { Tool } from '../tool';
import { policyDecision } from './decide';
import { elapsedMs } from './execute';
import { executeAndObserve } from './execute-and-observe';
import { observe } from './observe';
import { planCall } from './plan-call';
import { record } from './record';
import { recordObservation } from './record-observation';
import { toolContext } from './tool-context';
import type { CallResult, PipelineDeps } from './types';

/**
 * Continues a call a stopped run left unfinished (resume); it never runs anything twice.
 *
 * Where the call got to decides how:
 *  1. it completed and only its observation was lost: the recorded completion is reported;
 *  2. a delegate call whose sub-agent can go on: the sub-agent continues, and its result is observed;
 *  3. it started but never completed: reported as interrupted (recorded `lost`), not run again;
 *  4. it was not decided yet: reported as not run;
 *  5. otherwise its paths are resolved and it is planned again; what would run now must hash to
 *     what was decided;
 *  6. the recorded decision stands (allow or deny; the policy is not asked again);
 *  7. an `ask` runs only with a grant from the log (approval/continue-approval.ts);
 *  8. then it executes and is observed like any call.
 */
export async function continueCall(
  deps: PipelineDeps,
  callId: string,
  signal?: AbortSignal,
): Promise<CallResult | undefined> {
  const call = deps.tracker.state.approvals.calls[callId];
  if (!call || call.observed) return undefined;
  const tool = deps.registry.get(call.tool);
  const earlier = await finishStarted(deps, call, tool, signal);
  if (earlier) return earlier;
  if (!tool || !call.decision || call.validated === undefined) {
    // 4. Not decided yet.
    return recordObservation(deps, {
      callId,
      tool: call.tool,
      outcome: 'failed',
      body:
        `${call.tool} was interrupted before it was decided; it did not run. ` +
        'Propose it again if it is still needed.',
      causationId: call.started?.eventId ?? call.decision?.eventId ?? null,
      input: call.input,
    });
  }
  const decision = call.decision;
  const input = call.validated;
  const notRun = (why: string) =>
    recordObservation(deps, {
      callId,
      tool: call.tool,
      outcome: 'failed',
      body: `${call.tool} was not run: ${why}. Propose it again.`,
      causationId: decision.eventId,
      input,
    });
  // 5. Resolved again: the plan carries where the paths led, and they must lead there still.
  const paths = await checkWorkspacePaths(deps.sandbox, tool.workspacePaths?.(input) ?? []);
  if (paths.errors.length > 0) return notRun(paths.errors.map((e) => e.message).join('; '));
  const actor = call.byRuntime ? 'runtime' : 'model';
  const { plan, executionHash } = planCall(tool, input, toolContext(deps, paths.resolved, actor));
  if (decision.executionHash !== undefined && executionHash !== decision.executionHash) {
    return notRun(
      'what it would execute now differs from what was decided ' +
        '(a path that now resolves elsewhere, or a different gatehouse version)',
    );
  }
  // 6. The recorded decision stands.
  if (decision.decision === 'allow') {
    const grant = { eventId: decision.eventId, executionHash, by: 'policy' } as const;
    return executeAndObserve(deps, { callId, tool, input }, plan, grant, signal);
  }
  if (decision.decision === 'deny') {
    return recordObservation(deps, {
      callId,
      tool: call.tool,
      outcome: 'denied',
      body: `${call.tool} was denied by policy. It was not run.`,
      causationId: decision.eventId,
      input,
    });
  }
  // 7. Approve from the log, or ask.
  const decisionNow = () => policyDecision(deps, tool, input, paths.resolved).decision;
  const approved = await continueApproval(deps, { ...call, decision }, input, executionHash, decisionNow, signal);
  if (approved.kind === 'pending') return approved;
  if (approved.kind === 'denied') return { kind: 'observed', observation: approved.observation };
  // 8. Execute and observe.
  return executeAndObserve(deps, { callId, tool, input }, plan, approved.grant, signal);
}

/** Steps 1–3: a call that completed or started is reported or continued, never started again. */
async function finishStarted(
  deps: PipelineDeps,
  call: CallState,
  tool: Tool<unknown> | undefined,
  signal?: AbortSignal,
): Promise<CallResult | undefined> {
  const { callId } = call;
  if (call.completed && call.result) {
    // 1. It ran and its completion is on record; only the observation was lost. Never run it again.
    const r = call.result;
    const more = r.artifactRefs.length
      ? ` Its full output is stored: read_artifact {"ref": "${r.artifactRefs[0]}"}.`
      : ' Its output was not kept.';
    return recordObservation(deps, {
      callId,
      tool: call.tool,
      outcome: r.status === 'ok' ? 'ok' : 'failed',
      body:
        `${call.tool} ran (status ${r.status}${r.exitCode !== null ? `, exit code ${r.exitCode}` : ''}) ` +
        `before gatehouse stopped; it is not run again.${more}`,
      causationId: r.eventId,
      input: call.input,
    });
  }
  if (!call.started || call.completed) return undefined;
  if (tool?.name === 'delegate' && deps.resumeDelegate && call.validated !== undefined) {
    // 2. A sub-agent that paused (or was cut short) is continued, not started again.
    const t0 = performance.now();
    const result = await deps.resumeDelegate(callId, signal);
    if (result) {
      const plan = tool.plan(call.validated, toolContext(deps));
      return observe(deps, { callId, tool, input: call.validated }, plan, {
        invocationId: call.started.invocationId,
        startedId: call.started.eventId,
        raw: { executor: 'orchestrator', result },
        durationMs: elapsedMs(t0),
      });
    }
  }
  // 3. It started and never completed: it may have had effects, so it is not run again.
  const completed = record(
    deps,
    'tool.execution.completed',
    'runtime',
    {
      callId,
      invocationId: call.started.invocationId,
      status: 'lost',
      exitCode: null,
      signal: null,
      durationMs: 0,
      bytes: 0,
      truncated: false,
      filesChanged: [],
      artifactRefs: [],
      error: { code: 'interrupted', message: 'the orchestrator stopped while this ran; it is not run again' },
    },
    call.started.eventId,
  );
  return recordObservation(deps, {
    callId,
    tool: call.tool,
    outcome: 'failed',
    body:
      `${call.tool} was interrupted: gatehouse stopped while it ran, so its result was not recorded. ` +
      'It is NOT run again automatically (it may have had effects; ' +
      'the workspace was restored from the last state gatehouse saw, so check it before retrying).',
    causationId: completed.id,
    input: call.input,
  });
}
