import os from 'node:os';
import { pendingRequests, type RequestState } from '../events/approval-state';
import { resolveStateDir } from '../events/paths';
import { fold } from '../events/state';
import { RunLog } from '../events/store';

export class ApprovalCommandError extends Error {}

/** `gatehouse approvals RUN`: the run's pending requests (with --json, one JSON object per line). */
export function approvalsCommand(runId: string, o: { stateDir?: string; json?: boolean }): number {
  const state = fold(RunLog.readEvents(resolveStateDir(o.stateDir), runId));
  const pending = pendingRequests(state.approvals);
  for (const r of pending) {
    if (o.json) process.stdout.write(`${JSON.stringify(view(runId, r))}\n`);
    else process.stdout.write(`${r.requestId}  ${r.tool} ${JSON.stringify(r.input).slice(0, 120)}\n    rule: ${r.rule}\n    reason: ${r.reason}\n${r.risk.map((x) => `    risk: ${x}\n`).join('')}`);
  }
  if (!o.json && pending.length === 0) process.stdout.write(`no pending approvals in run ${runId}\n`);
  return 0;
}

function view(runId: string, r: RequestState): Record<string, unknown> {
  return { runId, requestId: r.requestId, tool: r.tool, input: r.input, actionHash: r.actionHash, rule: r.rule, reason: r.reason, risk: r.risk, lineage: r.lineage };
}

/**
 * `gatehouse approve RUN REQUEST` / `gatehouse deny RUN REQUEST --reason …`: the answer is appended
 * to the run's log (taking its writer lock, so not while the run itself is live) by the person at
 * this account; `gatehouse resume RUN` then acts on it.
 */
export function answerCommand(runId: string, requestId: string, o: { stateDir?: string; decision: 'grant' | 'deny'; scope?: 'once' | 'run'; reason?: string; json?: boolean }): number {
  const { log } = RunLog.open(resolveStateDir(o.stateDir), runId);
  try {
    const state = fold(log.events());
    const r = state.approvals.requests[requestId];
    if (!r) throw new ApprovalCommandError(`run ${runId} has no approval request ${requestId}; list them with: gatehouse approvals ${runId}`);
    if (r.status !== 'pending') throw new ApprovalCommandError(`request ${requestId} was already ${r.status} by ${r.answer?.approver ?? '?'}`);
    const approver = `user:${os.userInfo().username}`;
    const cause = { causationId: r.eventId };
    const event =
      o.decision === 'grant'
        ? log.append('approval.granted', 'user', { requestId, callId: r.callId, actionHash: r.actionHash, executionHash: r.executionHash, scope: o.scope ?? 'once', approver, channel: 'cli', reason: o.reason ?? '' }, cause)
        : log.append('approval.denied', 'user', { requestId, callId: r.callId, actionHash: r.actionHash, approver, channel: 'cli', reason: o.reason ?? 'denied' }, cause);
    log.sync();
    if (o.json) process.stdout.write(`${JSON.stringify(event)}\n`);
    else process.stdout.write(`${o.decision === 'grant' ? `approved (scope ${o.scope ?? 'once'})` : 'denied'}: ${requestId} ${r.tool} — continue with: gatehouse resume ${runId}\n`);
    return 0;
  } finally {
    log.close();
  }
}
