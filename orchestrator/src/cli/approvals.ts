import os from 'node:os';
import type { EventEnvelope, PlanChanges, RecoveryChoice } from '@gatehouse/shared';
import { checkPlanAnswer, ESCALATION, type Answered } from '../approval/plan-answer';
import { pendingRequests, type RequestState } from '../approval/state';
import { GatehouseError } from '../errors';
import { resolveRun } from '../events/run-ref';
import { fold } from '../events/state';
import { RunLog } from '../events/store';
import { previewOf } from '../approval/channels/preview';
import { oneLine, visible } from '../approval/channels/screen';

/** An approval command that cannot be carried out (no such request, the run is over): nothing is recorded. */
export class ApprovalCommandError extends GatehouseError {
  readonly kind = 'refused';
}

/**
 * The run and its sub-agents with their events, parents first (from agent.spawned events; bounded).
 * Each log is read once.
 */
function readTree(stateDir: string, runId: string): Array<{ runId: string; events: readonly EventEnvelope[] }> {
  const out: Array<{ runId: string; events: readonly EventEnvelope[] }> = [];
  const seen = new Set<string>();
  const queue = [runId];
  while (queue.length > 0 && seen.size < 1000) {
    const id = queue.shift() as string;
    if (seen.has(id)) continue;
    seen.add(id);
    let events;
    try {
      events = RunLog.readEvents(stateDir, id);
    } catch (e) {
      // The named run must be readable: a mistyped id is an error, not an empty tree. A missing
      // child log is tolerated (`show --tree` reports it).
      if (id === runId) throw e;
      continue;
    }
    out.push({ runId: id, events });
    for (const e of events) if (e.type === 'agent.spawned' && e.data.parentRunId === id) queue.push(e.data.childRunId);
  }
  return out;
}

/** Pending requests of a run and of every sub-agent under it: a child's ask is the tree's ask. */
export function treePending(stateDir: string, runId: string): Array<{ runId: string; request: RequestState }> {
  return readTree(stateDir, runId).flatMap(({ runId: id, events }) =>
    pendingRequests(fold(events).approvals).map((request) => ({ runId: id, request })),
  );
}

/**
 * `gatehouse approvals RUN`: pending requests of the run and its sub-agents (with --json, one JSON object per line).
 */
export function approvalsCommand(ref: string, o: { stateDir?: string; json?: boolean }): number {
  const { stateDir, runId } = resolveRun(ref, o);
  const pending = treePending(stateDir, runId);
  for (const { runId: owner, request: r } of pending) {
    if (o.json) process.stdout.write(`${JSON.stringify(view(owner, r))}\n`);
    else {
      // The whole action, with control characters shown as escapes: what is approved is what is seen.
      const preview = visible(previewOf(r.tool, r.input))
        .split('\n')
        .map((l) => `    │ ${l}`)
        .join('\n');
      process.stdout.write(
        `${r.requestId}  ${r.tool}${owner !== runId ? `  (sub-agent ${owner})` : ''}\n${preview}\n    rule: ` +
          `${oneLine(r.rule)}\n    reason: ` +
          `${oneLine(r.reason)}\n${r.risk.map((x) => `    risk: ${oneLine(x)}\n`).join('')}`,
      );
    }
  }
  if (!o.json && pending.length === 0) process.stdout.write(`no pending approvals in run ${runId}\n`);
  return 0;
}

function view(runId: string, r: RequestState): Record<string, unknown> {
  return {
    runId,
    requestId: r.requestId,
    tool: r.tool,
    input: r.input,
    actionHash: r.actionHash,
    rule: r.rule,
    reason: r.reason,
    risk: r.risk,
    lineage: r.lineage,
  };
}

/** How an approval is answered: gatehouse approve|deny, the plan answers, or mcp serve's approve tool. */
export interface AnswerOptions {
  stateDir?: string;
  decision: 'grant' | 'deny';
  scope?: 'once' | 'run';
  reason?: string;
  onBehalfOf?: string;
  /** Plan mode (plan-answers.ts): a plan's changes, an escalation's choice, a question instead of a rejection. */
  plan?: { changes?: PlanChanges; choice?: RecoveryChoice; clarify?: true };
}

/** An answer as recorded: the event, the run whose log holds it (a sub-agent's, maybe), and what it said. */
export interface RecordedAnswer {
  event: EventEnvelope;
  treeRoot: string;
  owner: string;
  tool: string;
  said: string;
}

/**
 * `gatehouse approve RUN REQUEST` / `gatehouse deny RUN REQUEST --reason …`: the answer is appended
 * to the run's log (taking its writer lock, so not while the run itself is live) by the person at
 * this account; `gatehouse resume RUN` then acts on it.
 */
export function answerCommand(ref: string, requestId: string, o: AnswerOptions & { json?: boolean }): number {
  const a = recordAnswer(ref, requestId, o);
  if (o.json) process.stdout.write(`${JSON.stringify(a.event)}\n`);
  else
    process.stdout.write(
      `${a.said}: ${requestId} ${a.tool}${a.owner !== a.treeRoot ? ` (sub-agent ${a.owner})` : ''} — continue with: ` +
        `gatehouse resume ${a.treeRoot}\n`,
    );
  return 0;
}

/**
 * Appends the answer to a pending request of the run (or of a sub-agent under it) and returns it;
 * writes nothing to stdout. Refused (ApprovalCommandError, nothing recorded) when there is no such
 * request, it was answered already, or the answer does not fit it.
 */
export function recordAnswer(ref: string, requestId: string, o: AnswerOptions): RecordedAnswer {
  const { stateDir, runId: treeRoot } = resolveRun(ref, o);
  // The request may belong to a sub-agent of the named run: it is answered in that agent's log.
  const owner = treePending(stateDir, treeRoot).find((p) => p.request.requestId === requestId)?.runId ?? treeRoot;
  const runId = owner;
  const { log } = RunLog.open(stateDir, runId);
  try {
    const state = fold(log.events());
    const r = state.approvals.requests[requestId];
    if (!r)
      throw new ApprovalCommandError(
        `run ${runId} has no approval request ${requestId}; list them with: gatehouse approvals ${runId}`,
      );
    if (r.status !== 'pending')
      throw new ApprovalCommandError(`request ${requestId} was already ${r.status} by ${r.answer?.approver ?? '?'}`);
    // The account that wrote the answer, and whom it says it answered for (a CI job for a maintainer).
    const approver = `user:${os.userInfo().username}${o.onBehalfOf ? ` for ${o.onBehalfOf}` : ''}`;
    // The answer must fit the request (a plan's changes applied to it, an escalation's choice) before it is written.
    const fits = checkPlanAnswer(
      r.tool,
      r.input,
      o.decision === 'grant'
        ? { decision: 'grant', scope: o.scope ?? 'once', approver, channel: 'cli', ...o.plan }
        : { decision: 'deny', approver, channel: 'cli', reason: o.reason ?? 'denied', ...o.plan },
    );
    if (!fits.ok)
      throw new ApprovalCommandError(
        `${requestId} (${r.tool}) was not answered, nothing was recorded: ${fits.problem}` +
          (r.tool === ESCALATION
            ? `; decide it with: gatehouse plan decide ${treeRoot} ${requestId} retry|skip|abort`
            : ''),
      );
    const plan = fits.answer;
    const cause = { causationId: r.eventId };
    const event =
      plan.decision === 'grant'
        ? log.append(
            'approval.granted',
            'user',
            {
              requestId,
              callId: r.callId,
              actionHash: r.actionHash,
              executionHash: r.executionHash,
              scope: o.scope ?? 'once',
              approver,
              channel: 'cli',
              reason: o.reason ?? '',
              ...(plan.changes ? { changes: plan.changes } : {}),
              ...(plan.choice ? { choice: plan.choice } : {}),
            },
            cause,
          )
        : log.append(
            'approval.denied',
            'user',
            {
              requestId,
              callId: r.callId,
              actionHash: r.actionHash,
              approver,
              channel: 'cli',
              reason: o.reason ?? 'denied',
              ...(plan.clarify ? { clarify: true } : {}),
            },
            cause,
          );
    log.sync();
    return { event, treeRoot, owner: runId, tool: r.tool, said: saidOf(plan, o.scope ?? 'once') };
  } finally {
    log.close();
  }
}

/** What the answer was, in the words of its command. */
function saidOf(a: Answered, scope: 'once' | 'run'): string {
  if (a.decision === 'deny') return a.clarify ? 'question sent' : 'denied';
  if (a.choice) return `decided ${a.choice}`;
  if (a.changes) return 'approved with changes';
  return `approved (scope ${scope})`;
}
