import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { isEvent, sha256Hex } from '@gatehouse/shared';
import { asStatus, nodeFromEvents, type AgentNode } from './agent-node';
import { listRuns } from './runs';
import { lastEvent } from './state';
import { RunLog } from './store';

/**
 * A tree of agents rebuilt from their logs alone: who delegated to whom, what each one did, who
 * allowed it, and where the logs disagree. The parent's `agent.spawned` events name the children;
 * each child's own log must say the same thing back (same ids, same handoff hash, the parent on
 * every event, the same ending). A bad or missing child is reported in `problems`, never thrown.
 */

export interface TreeLimits {
  /** Levels below the root that are read. */
  maxDepth: number;
  /** Agents read in all. */
  maxNodes: number;
}

export const TREE_LIMITS: TreeLimits = { maxDepth: 16, maxNodes: 1000 };

/**
 * The tree below `rootRunId`. Throws if the root's log is missing or damaged; anything below is reported, not thrown.
 */
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
      `${foreign.length} event(s) do not name ${parent.runId} as their parent (first: seq ${foreign[0]!.seq}, ` +
        `parentRunId ${String(foreign[0]!.parentRunId)})`,
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
        `agent.completed disagrees on resultSha256: parent's log ${String(parentDone.resultSha256)}, child's log ` +
          `${String(childDone.resultSha256)}`,
      );
  } else if (parentDone && runDone) {
    // The child ended before its finish step (its sandbox never started): its run.completed is the account.
    const answerSha = runDone.answer !== undefined ? sha256Hex(runDone.answer) : null;
    if (parentDone.status !== runDone.status)
      p.push(
        `agent.completed in the parent's log says ${parentDone.status}, the child's run.completed says ` +
          `${runDone.status}`,
      );
    if (parentDone.resultSha256 !== answerSha)
      p.push(
        `agent.completed in the parent's log has resultSha256 ${String(parentDone.resultSha256)}, the child's answer ` +
          `hashes to ${String(answerSha)}`,
      );
  } else if (parentDone) {
    p.push(`the parent's log says the child ended ${parentDone.status}, but the child's log has not ended`);
  } else if (childDone && parent.status !== 'running') {
    p.push(
      `the child's log says it ended ${childDone.status}, but the parent's log (which has ended) has no ` +
        `agent.completed for it`,
    );
  }
}
