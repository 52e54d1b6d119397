import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { isEvent, sha256Hex } from '@gatehouse/shared';
import { applyApproval, initialApprovalState } from './approval-state';
import { listRuns } from './runs';
import { lastEvent } from './state';
import { RunLog } from './store';

/**
 * A tree of agents rebuilt from their logs alone: who delegated to whom, what each one did, who
 * allowed it, and where the logs disagree. The parent's `agent.spawned` events name the children;
 * each child's own log must say the same thing back (same ids, same handoff hash, the parent on
 * every event, the same ending). A bad or missing child is reported in `problems`, never thrown.
 */

export type AgentStatus = 'final' | 'partial' | 'failed' | 'cancelled' | 'paused' | 'running';

export interface AgentAction {
  callId: string;
  tool: string;
  /** The proposed input as compact JSON, cut to a line. */
  input: string;
  /** The last tool.observation's outcome; 'none' when nothing was shown (yet). */
  outcome: string;
  /**
   * What allowed it to run: the policy rule's id, or `user:NAME via CHANNEL (SCOPE)`. For a call
   * that did not run, `none (…)` says what stopped it.
   */
  authorisedBy: string;
}

export interface AgentApproval {
  requestId: string;
  tool: string;
  status: 'pending' | 'granted' | 'denied';
  approver?: string;
  channel?: string;
}

export interface AgentNode {
  runId: string;
  parentRunId: string | null;
  depth: number;
  task: string;
  status: AgentStatus;
  stopReason: string | null;
  /** The tools it could see (run.started.surface). */
  tools: string[];
  actions: AgentAction[];
  approvals: AgentApproval[];
  children: AgentNode[];
  problems: string[];
}

export interface TreeLimits {
  /** Levels below the root that are read. */
  maxDepth: number;
  /** Agents read in all. */
  maxNodes: number;
}

export const TREE_LIMITS: TreeLimits = { maxDepth: 16, maxNodes: 1000 };

const BRIEF = 120;

/** The tree below `rootRunId`. Throws if the root's log is missing or damaged; anything below is reported, not thrown. */
export function buildTree(stateDir: string, rootRunId: string, limits: TreeLimits = TREE_LIMITS): AgentNode {
  const rootEvents = RunLog.readEvents(stateDir, rootRunId);
  const ctx: Ctx = { stateDir, limits, seen: new Set([rootRunId]), count: 1, claimedBy: claimedParents(stateDir) };
  const ownSpawn = rootEvents.filter((e) => isEvent(e, 'agent.spawned')).find((e) => e.data.childRunId === rootRunId);
  const depth = ownSpawn ? ownSpawn.data.depth : 0;
  const root = nodeFromEvents(rootRunId, rootEvents, depth);
  expand(ctx, root, rootEvents, 0);
  return root;
}

/** Every node of the tree, depth first (the root first). */
export function walkTree(root: AgentNode): AgentNode[] {
  const out: AgentNode[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out;
}

interface Ctx {
  stateDir: string;
  limits: TreeLimits;
  seen: Set<string>;
  count: number;
  /** parentRunId → runs whose logs name it as their parent. */
  claimedBy: Map<string, string[]>;
}

/** Which runs name which parent (first event's parentRunId), to find children no spawn accounts for. */
function claimedParents(stateDir: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  let runs;
  try {
    runs = listRuns(stateDir);
  } catch {
    return map;
  }
  for (const r of runs) {
    if (!r.parentRunId) continue;
    const list = map.get(r.parentRunId) ?? [];
    list.push(r.runId);
    map.set(r.parentRunId, list);
  }
  return map;
}

/** Reads the children `node`'s log names, checks each against its own log, and recurses. */
function expand(ctx: Ctx, node: AgentNode, events: readonly EventEnvelope[], level: number): void {
  const spawns = new Map<string, EventDataOf<'agent.spawned'>>();
  const completions = new Map<string, EventDataOf<'agent.completed'>>();
  for (const e of events) {
    if (e.type === 'agent.spawned') {
      const d = e.data;
      if (d.childRunId === node.runId) continue; // its own spawn, copied from its parent
      if (d.parentRunId !== node.runId)
        node.problems.push(
          `agent.spawned (seq ${e.seq}) for ${d.childRunId} names parent ${d.parentRunId}, not this run`,
        );
      if (spawns.has(d.childRunId)) node.problems.push(`${d.childRunId} is spawned twice (again at seq ${e.seq})`);
      else spawns.set(d.childRunId, d);
    } else if (e.type === 'agent.completed') {
      const d = e.data;
      if (d.childRunId === node.runId) continue;
      if (!spawns.has(d.childRunId))
        node.problems.push(`agent.completed (seq ${e.seq}) for ${d.childRunId}, which this run never spawned`);
      else if (completions.has(d.childRunId))
        node.problems.push(`${d.childRunId} completes twice (again at seq ${e.seq})`);
      else completions.set(d.childRunId, d);
    }
  }
  for (const runId of ctx.claimedBy.get(node.runId) ?? []) {
    if (!spawns.has(runId))
      node.problems.push(`run ${runId} names this run as its parent, but this run's log never spawned it`);
  }

  const pending = [...spawns.values()];
  if (pending.length > 0 && level >= ctx.limits.maxDepth) {
    node.problems.push(
      `${pending.length} sub-agent(s) not read: the tree is read at most ${ctx.limits.maxDepth} levels deep`,
    );
    return;
  }
  for (let i = 0; i < pending.length; i++) {
    const spawn = pending[i]!;
    if (ctx.seen.has(spawn.childRunId)) {
      node.problems.push(`${spawn.childRunId} appears twice in the tree (a cycle or a reused run id); not read again`);
      continue;
    }
    if (ctx.count >= ctx.limits.maxNodes) {
      node.problems.push(
        `${pending.length - i} sub-agent(s) not read: the tree is limited to ${ctx.limits.maxNodes} agents`,
      );
      return;
    }
    ctx.seen.add(spawn.childRunId);
    ctx.count++;
    const parentDone = completions.get(spawn.childRunId);
    let childEvents: EventEnvelope[];
    try {
      childEvents = RunLog.readEvents(ctx.stateDir, spawn.childRunId);
    } catch (e) {
      node.children.push(missingChild(node, spawn, parentDone, `child log unreadable: ${(e as Error).message}`));
      continue;
    }
    const child = nodeFromEvents(spawn.childRunId, childEvents, node.depth + 1);
    child.parentRunId = node.runId;
    checkChild(child, node, spawn, parentDone, childEvents);
    node.children.push(child);
    expand(ctx, child, childEvents, level + 1);
  }
}

/** A child whose log cannot be read: what the parent's log says about it, and the problem. */
function missingChild(
  parent: AgentNode,
  spawn: EventDataOf<'agent.spawned'>,
  done: EventDataOf<'agent.completed'> | undefined,
  problem: string,
): AgentNode {
  return {
    runId: spawn.childRunId,
    parentRunId: parent.runId,
    depth: parent.depth + 1,
    task: spawn.reason,
    status: done ? asStatus(done.status) : 'running',
    stopReason: done ? done.stopReason : null,
    tools: [...spawn.tools],
    actions: [],
    approvals: [],
    children: [],
    problems: [problem],
  };
}

/** The child's log must tell the same story as its parent's. */
function checkChild(
  child: AgentNode,
  parent: AgentNode,
  spawn: EventDataOf<'agent.spawned'>,
  parentDone: EventDataOf<'agent.completed'> | undefined,
  events: readonly EventEnvelope[],
): void {
  const p = child.problems;
  const foreign = events.filter((e) => e.parentRunId !== parent.runId);
  if (foreign.length > 0)
    p.push(
      `${foreign.length} event(s) do not name ${parent.runId} as their parent (first: seq ${foreign[0]!.seq}, parentRunId ${String(foreign[0]!.parentRunId)})`,
    );

  const own = events.filter((e) => e.type === 'agent.spawned').map((e) => e.data);
  const mine = own.find((d) => d.childRunId === child.runId);
  if (!mine) p.push("the child's log has no agent.spawned for itself");
  else {
    for (const k of ['childRunId', 'parentRunId', 'callId', 'handoffSha256'] as const) {
      if (mine[k] !== spawn[k])
        p.push(`agent.spawned disagrees on ${k}: parent's log ${spawn[k]}, child's log ${mine[k]}`);
    }
  }
  if (spawn.depth !== child.depth)
    p.push(`agent.spawned gives depth ${spawn.depth}, but the child sits at depth ${child.depth}`);
  const started = events[0]?.type === 'run.started' ? events[0].data : undefined;
  if (!started) p.push("the child's log does not begin with run.started");
  else if (started.lineage && (started.lineage.at(-1) !== child.runId || started.lineage.at(-2) !== parent.runId)) {
    p.push(`run.started lineage ${started.lineage.join(' > ')} does not end with ${parent.runId} > ${child.runId}`);
  }

  const childDone = events
    .filter((e) => e.type === 'agent.completed')
    .map((e) => e.data)
    .find((d) => d.childRunId === child.runId);
  const runDone = lastEvent(events, 'run.completed')?.data;
  if (parentDone && childDone) {
    if (parentDone.status !== childDone.status)
      p.push(`agent.completed disagrees on status: parent's log ${parentDone.status}, child's log ${childDone.status}`);
    if (parentDone.resultSha256 !== childDone.resultSha256)
      p.push(
        `agent.completed disagrees on resultSha256: parent's log ${String(parentDone.resultSha256)}, child's log ${String(childDone.resultSha256)}`,
      );
  } else if (parentDone && runDone) {
    // The child ended before its finish step (its sandbox never started): its run.completed is the account.
    const answerSha = runDone.answer !== undefined ? sha256Hex(runDone.answer) : null;
    if (parentDone.status !== runDone.status)
      p.push(
        `agent.completed in the parent's log says ${parentDone.status}, the child's run.completed says ${runDone.status}`,
      );
    if (parentDone.resultSha256 !== answerSha)
      p.push(
        `agent.completed in the parent's log has resultSha256 ${String(parentDone.resultSha256)}, the child's answer hashes to ${String(answerSha)}`,
      );
  } else if (parentDone) {
    p.push(`the parent's log says the child ended ${parentDone.status}, but the child's log has not ended`);
  } else if (childDone && parent.status !== 'running') {
    p.push(
      `the child's log says it ended ${childDone.status}, but the parent's log (which has ended) has no agent.completed for it`,
    );
  }
}

/** One agent's own account, from its own log. */
function nodeFromEvents(runId: string, events: readonly EventEnvelope[], depth: number): AgentNode {
  const started = events.find((e) => e.type === 'run.started')?.data;
  let status: AgentStatus = 'running';
  let stopReason: string | null = null;
  for (const e of events) {
    if (e.type === 'run.completed') {
      const d = e.data;
      status = d.status;
      stopReason = d.stopReason;
    } else if (e.type === 'run.paused') {
      status = 'paused';
      stopReason = 'awaiting_approval';
    } else if (e.type === 'run.resumed') {
      status = 'running';
      stopReason = null;
    }
  }
  const problems: string[] = [];
  return {
    runId,
    parentRunId: events[0]?.parentRunId ?? null,
    depth,
    task: started?.task ?? '',
    status,
    stopReason,
    tools: started ? [...started.surface] : [],
    actions: actionsOf(events, problems),
    approvals: approvalsOf(events),
    children: [],
    problems,
  };
}

function actionsOf(events: readonly EventEnvelope[], problems: string[]): AgentAction[] {
  const byId = new Map(events.map((e) => [e.id, e]));
  interface Call {
    callId: string;
    tool: string;
    input: unknown;
    rejectedAt?: string;
    decision?: EventDataOf<'tool.approval'>;
    requestId?: string;
    approvalId?: string;
    outcome?: string;
  }
  const calls = new Map<string, Call>();
  for (const e of events) {
    if (!e.type.startsWith('tool.') && e.type !== 'approval.requested') continue;
    if (!('callId' in e.data)) continue;
    if (e.type === 'tool.intent') {
      const x = e.data;
      if (!calls.has(x.callId)) calls.set(x.callId, { callId: x.callId, tool: x.tool, input: x.input });
      continue;
    }
    const c = calls.get(e.data.callId);
    if (!c) continue;
    switch (e.type) {
      case 'tool.validation': {
        const x = e.data;
        if (!x.ok) c.rejectedAt = x.stage;
        break;
      }
      case 'tool.approval':
        c.decision = e.data;
        break;
      case 'approval.requested':
        c.requestId = e.data.requestId;
        break;
      case 'tool.execution.started':
        c.approvalId = e.data.approvalId;
        break;
      case 'tool.observation':
        c.outcome = e.data.outcome;
        break;
    }
  }
  const answers = new Map<string, EventEnvelope>();
  for (const e of events) {
    if (e.type === 'approval.granted' || e.type === 'approval.denied') answers.set(e.data.requestId, e);
  }
  return [...calls.values()].map((c) => ({
    callId: c.callId,
    tool: c.tool,
    input: brief(c.input),
    outcome: c.outcome ?? 'none',
    authorisedBy:
      c.approvalId !== undefined ? authority(c.callId, c.approvalId, byId, problems) : stoppedBy(c, answers),
  }));
}

/** Who or what let an execution happen, from the event its approvalId points at. */
function authority(callId: string, approvalId: string, byId: Map<string, EventEnvelope>, problems: string[]): string {
  const a = byId.get(approvalId);
  if (a?.type === 'tool.approval') {
    const d = a.data;
    if (d.decision !== 'allow' || d.callId !== callId)
      problems.push(`${callId} ran under ${approvalId}, a ${d.decision} decision for ${d.callId}`);
    return d.policyId;
  }
  if (a?.type === 'approval.granted') {
    const g = a.data;
    if (a.actor !== 'user')
      problems.push(`${callId} ran under ${approvalId}, a grant not recorded as a person's (actor ${a.actor})`);
    return `user:${g.approver} via ${g.channel} (${g.scope})`;
  }
  problems.push(`${callId} ran under ${approvalId}, which is not an approval in this log`);
  return `unknown (${approvalId})`;
}

function stoppedBy(
  c: { rejectedAt?: string; decision?: EventDataOf<'tool.approval'>; requestId?: string },
  answers: Map<string, EventEnvelope>,
): string {
  if (c.rejectedAt) return `none (rejected at ${c.rejectedAt})`;
  if (c.decision?.decision === 'deny') return `none (denied by ${c.decision.policyId})`;
  if (c.requestId) {
    const a = answers.get(c.requestId);
    if (a?.type === 'approval.denied') {
      const d = a.data;
      return `none (denied by user:${d.approver} via ${d.channel})`;
    }
    if (a?.type === 'approval.granted') {
      const g = a.data;
      return `none (granted by user:${g.approver} via ${g.channel}, not run)`;
    }
    return `none (awaiting ${c.requestId})`;
  }
  return 'none';
}

/** Requests and their answers as the run's approval state folds them (a mismatched answer is no answer). */
function approvalsOf(events: readonly EventEnvelope[]): AgentApproval[] {
  const s = initialApprovalState();
  for (const e of events) applyApproval(s, e);
  return Object.values(s.requests).map((r) => ({
    requestId: r.requestId,
    tool: r.tool,
    status: r.status,
    ...(r.answer ? { approver: r.answer.approver, channel: r.answer.channel } : {}),
  }));
}

function asStatus(s: string): AgentStatus {
  return (['final', 'partial', 'failed', 'cancelled', 'paused', 'running'] as const).find((x) => x === s) ?? 'failed';
}

export function brief(value: unknown, max = BRIEF): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  text = text.replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
