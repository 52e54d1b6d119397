import type { EventEnvelope } from '@gatehouse/shared';
import type { AgentNode } from '../events/agent-node';
import { lastEvent } from '../events/state';
import { RunLog } from '../events/store';
import type { ReportAgent } from './report-agent-schema';
import { refusalsOf } from './report-calls';
import { timelineOf } from './report-timeline';
import { usageOf } from './report-usage';
import { reportKey, verifyOf, type ReportKey } from './report-verify';

/**
 * The report of every agent of a tree, each from its own log: its calls phase by phase, what it was
 * handed and how its parent's log says it ended, what it was refused, what it spent, and verify's
 * verdict on its log. `node` is the tree `buildTree` rebuilt; `events` the root's log, already read.
 */
export function agentsReportOf(
  stateDir: string,
  node: AgentNode,
  events: readonly EventEnvelope[],
  verify = true,
): ReportAgent {
  // Auditing re-reads every log and re-hashes its artifacts: only for a report that shows the verdict.
  const key: ReportKey = verify ? reportKey() : { skip: 'not checked: this report does not show verify' };
  return agentOf(stateDir, node, events, null, key);
}

function agentOf(
  stateDir: string,
  n: AgentNode,
  events: readonly EventEnvelope[],
  parentEvents: readonly EventEnvelope[] | null,
  key: ReportKey,
): ReportAgent {
  const started = lastEvent(events, 'run.started')?.data;
  const finished = n.status !== 'running' && n.status !== 'paused';
  const completed = finished ? lastEvent(events, 'run.completed')?.data : undefined;
  // A sub-agent's own log copies its spawn and its ending, so a report of the sub-agent alone has them too.
  const told = parentEvents ?? events;
  const spawn = told
    .map((e) => (e.type === 'agent.spawned' ? e.data : null))
    .find((d) => d?.childRunId === n.runId && d.parentRunId === n.parentRunId);
  const done = told
    .map((e) => (e.type === 'agent.completed' ? e.data : null))
    .find((d) => d?.childRunId === n.runId && d.parentRunId === n.parentRunId);
  return {
    runId: n.runId,
    depth: n.depth,
    task: n.task,
    status: n.status,
    stopReason: n.stopReason,
    actions: n.actions.length,
    problems: n.problems,
    children: n.children.map((c) => agentOf(stateDir, c, readOrNone(stateDir, c.runId), events, key)),
    model: started?.model ?? null,
    decidedBy: completed?.decidedBy ?? null,
    answer: completed?.answer ?? null,
    startedAt: events[0]?.ts ?? null,
    lastEventAt: events.at(-1)?.ts ?? null,
    handoff: spawn
      ? {
          callId: spawn.callId,
          task: spawn.reason,
          tools: spawn.tools,
          paths: spawn.paths,
          evidence: spawn.evidence.map((x) => x.id),
          budget: spawn.budget,
          policy: {
            mode: spawn.policy.mode,
            source: spawn.policy.source,
            rules: spawn.policy.rules,
            paths: spawn.policy.paths,
          },
        }
      : null,
    completion: done
      ? {
          status: done.status,
          stopReason: done.stopReason,
          filesChanged: done.filesChanged,
          withheld: done.withheld,
          denied: done.denied ?? [],
        }
      : null,
    calls: timelineOf(events, n.actions),
    refusals: refusalsOf(events, completed),
    usage: usageOf(events, completed, started),
    verify: verifyOf(stateDir, n.runId, key),
  };
}

/** A child's log; none when it cannot be read (the tree already says why, in the node's problems). */
function readOrNone(stateDir: string, runId: string): readonly EventEnvelope[] {
  try {
    return RunLog.readEvents(stateDir, runId);
  } catch {
    return [];
  }
}
