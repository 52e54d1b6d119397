import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isEvent, newId, sha256Hex, type EventDataOf, type EventEnvelope, type EventOf } from '@gatehouse/shared';
import { RunLog } from '../events/store';
import { lastEvent, StateTracker } from '../events/state';
import type { LoopOutcome } from '../loop/loop';
import { restoreWorkspace, snapshotWorkspace, type WorkspaceFiles, type WorkspaceSnapshot } from '../loop/workspace';
import { tee } from '../run/tee';
import type { AgentRunResult, RunEnvironment } from '../run/types';
import { codingTools } from '../tools/builtin/index';
import type { LogPort } from '../tools/ports';
import type { LocalResult } from '../tools/tool';
import { changedByChild, completed, conclude, deniedIn, outside, readChildEvents } from './child-result';
import type { Handoff } from './handoff';
import { narrowPolicy } from './narrow';
import { childTask, handoffHash, type Evidence } from './packet';
import { spawnedBy, type ParentRun } from './parent-run';

/**
 * A new child: `agent.spawned` in both logs, the parent's workspace handed over as it is now,
 * then the child's own run; a copy that fails means the child never starts.
 */
export async function runChild(
  p: ParentRun,
  h: Handoff,
  callId: string,
  provider: RunEnvironment['provider'],
  signal: AbortSignal,
  onRecorded: () => void,
): Promise<LocalResult> {
  const evidence = evidenceOf(p.log.events(), h.evidence);
  const childRunId = newId('run');
  const record = p.env.policyRecord;
  const spawned: EventDataOf<'agent.spawned'> = {
    parentRunId: p.runId,
    childRunId,
    callId,
    reason: h.task.slice(0, 500),
    handoffSha256: handoffHash(h, evidence),
    tools: [...h.tools],
    paths: [...h.paths],
    evidence: evidence.map((e) => ({ id: e.id, sha256: e.sha256 })),
    budget: { ...h.budget },
    policy: {
      mode: p.env.policy.mode,
      source: record?.source ?? 'built-in',
      sha256: record?.sha256 ?? sha256Hex('{}'),
      rules: ruleCount(record?.file),
      paths: [...h.paths],
    },
    depth: p.depth + 1,
  };
  p.log.append('agent.spawned', 'runtime', spawned);
  onRecorded(); // its budget now counts through the log
  const raw = RunLog.create(p.env.stateDir, childRunId, {
    parentRunId: p.runId,
    ...(p.env.eventStore ? { replica: p.env.eventStore.replicaFor(childRunId, { lastStreamSeq: 0 }) } : {}),
  });
  const tracker = new StateTracker();
  const log = tee(raw, tracker, p.env.onEvent);
  const task = childTask(h, evidence, p.runId);
  // A child may spend what its parent has left of a cost budget; the parent counts what it spent.
  const maxCostUsd = p.scope().remaining.costUsd;
  const cost = maxCostUsd !== undefined ? { maxCostUsd: Math.max(0, maxCostUsd) } : {};
  log.append('run.started', 'runtime', {
    task,
    mode: p.env.policy.mode,
    surface: [...h.tools],
    repo: p.repoDir,
    model: provider.id,
    ...(record ? { policy: record } : {}),
    lineage: [...p.lineage, childRunId],
    budgets: {
      maxTurns: h.budget.turns,
      maxToolCalls: h.budget.toolCalls,
      maxTokens: h.budget.tokens,
      wallClockMs: h.budget.seconds * 1000,
      ...cost,
    },
  });
  log.append('agent.spawned', 'runtime', spawned);

  let handedOver: WorkspaceSnapshot;
  try {
    handedOver = await snapshotWorkspace(p.sandbox, raw.runDir, 'handoff');
  } catch (e) {
    // Without the parent's workspace the child would work on something else: it does not start.
    const reason = `handoff_failed: the parent's workspace could not be copied: ${(e as Error).message}`;
    const failed = { status: 'failed' as const, stopReason: reason };
    log.append('agent.completed', 'runtime', completed(p.runId, childRunId, callId, failed, [], []));
    log.append('run.completed', 'runtime', { status: 'failed', stopReason: reason, filesChanged: [], applied: false });
    raw.close();
    p.log.append('agent.completed', 'runtime', completed(p.runId, childRunId, callId, failed, [], []));
    return { ok: false, output: '', error: { code: 'sub_agent_failed', message: reason } };
  }
  // Kept beside the child's log: a resumed child compares its result against the same hand-over.
  writeFileSync(path.join(raw.runDir, HANDOFF_FILE), JSON.stringify(handedOver));
  const collected = collector(p, h.paths, childRunId, callId, raw.runDir, handedOver, log);
  const outcome = await p.drive(childEnv(p, h, provider, signal, cost), {
    raw,
    log,
    tracker,
    registry: codingTools(),
    surface: [...h.tools],
    task,
    repoDir: p.repoDir,
    resume: false,
    prepare: (sandbox) => restoreWorkspace(sandbox, raw.runDir, handedOver),
    finish: collected.finish,
  });
  return conclude(p, h.paths, childRunId, callId, outcome, raw.runDir, handedOver, collected.result());
}

const HANDOFF_FILE = 'handoff-workspace.json';
const RESULT_FILE = 'result-workspace.json';

function readSnapshot(runDir: string, file: string): WorkspaceSnapshot {
  try {
    return JSON.parse(readFileSync(path.join(runDir, file), 'utf8')) as WorkspaceSnapshot;
  } catch {
    return { dir: null, files: [], deleted: [] };
  }
}

/** The child's environment: the handoff's budget, the parent's policy narrowed, one level deeper. */
function childEnv(
  p: ParentRun,
  h: Pick<Handoff, 'paths' | 'budget'>,
  provider: RunEnvironment['provider'],
  signal: AbortSignal,
  cost: { maxCostUsd?: number },
): RunEnvironment {
  // A child's own refused-answer reports would land in the wrong log: it gets none. Setup secrets
  // are for the root run's setup phase alone: a child never sees them.
  const { attachLog: _parentsOnly, setupEnv: _rootSetupOnly, ...env } = p.env;
  void _parentsOnly;
  void _rootSetupOnly;
  return {
    ...env,
    provider,
    policy: narrowPolicy(p.env.policy, h.paths),
    budgets: {
      maxTurns: h.budget.turns,
      maxToolCalls: h.budget.toolCalls,
      maxTokens: h.budget.tokens,
      wallClockMs: h.budget.seconds * 1000,
      ...cost,
    },
    apply: false,
    signal,
    agent: { depth: p.depth + 1, maxDepth: p.maxDepth, paths: h.paths, maxParallel: p.maxParallel },
  };
}

/** Before the child's sandbox goes: its files (for the parent) and, unless it paused, agent.completed in its log. */
function collector(
  p: ParentRun,
  paths: readonly string[],
  childRunId: string,
  callId: string,
  runDir: string,
  handedOver: WorkspaceSnapshot,
  log: LogPort & { events(): readonly EventEnvelope[] },
) {
  let result: WorkspaceSnapshot = { dir: null, files: [], deleted: [] };
  return {
    result: () => result,
    finish: async (sandbox: WorkspaceFiles, o: LoopOutcome): Promise<void> => {
      if (o.status === 'paused') return;
      result = await snapshotWorkspace(sandbox, runDir, 'result').catch(() => result);
      writeFileSync(path.join(runDir, RESULT_FILE), JSON.stringify(result));
      const changes = changedByChild(runDir, handedOver, result);
      log.append('agent.completed', 'runtime', {
        ...completed(p.runId, childRunId, callId, o, changes.all, outside(changes.all, paths)),
        denied: deniedIn(log.events()),
      });
    },
  };
}

/** Resume: the child of an unfinished delegate call continues from its own log, in a fresh sandbox. */
export async function resumeChild(p: ParentRun, callId: string, signal: AbortSignal): Promise<LocalResult | undefined> {
  const events = p.log.events();
  const spawnedEvent = events.find(
    (e): e is EventOf<'agent.spawned'> => spawnedBy(e, p.runId) && e.data.callId === callId,
  );
  if (!spawnedEvent || !p.resume) return undefined;
  const spawned = spawnedEvent.data;
  const index = events.filter((e) => spawnedBy(e, p.runId)).indexOf(spawnedEvent);
  const provider = p.env.provider.forChild?.(index) ?? p.env.provider;
  const runDir = path.join(path.dirname(p.runDir), spawned.childRunId);
  // Without a record of the hand-over, every file the child has is treated as its change.
  const handedOver = readSnapshot(runDir, HANDOFF_FILE);
  const h = { paths: spawned.paths, budget: spawned.budget };
  // A child that already ended (the parent stopped while applying its changes) is concluded from
  // its log and saved result, not run again.
  const childEvents = readChildEvents(p, spawned.childRunId);
  const ended = lastEvent(childEvents, 'run.completed');
  if (ended) {
    const d = ended.data;
    const outcome: AgentRunResult = {
      status: d.status,
      stopReason: d.stopReason,
      ...(d.answer !== undefined ? { answer: d.answer } : {}),
      runId: spawned.childRunId,
      runDir,
      repoDir: p.repoDir,
      filesChanged: d.filesChanged ?? [],
      applied: false,
      pendingRequests: [],
    };
    return conclude(
      p,
      spawned.paths,
      spawned.childRunId,
      callId,
      outcome,
      runDir,
      handedOver,
      readSnapshot(runDir, RESULT_FILE),
    );
  }
  let collected: ReturnType<typeof collector> | undefined;
  const started = childEvents[0]?.type === 'run.started' ? childEvents[0].data : undefined;
  const maxCostUsd = started?.budgets?.maxCostUsd;
  const cost = maxCostUsd !== undefined ? { maxCostUsd } : {};
  const outcome = await p.resume(spawned.childRunId, childEnv(p, h, provider, signal, cost), (log) => {
    collected = collector(p, spawned.paths, spawned.childRunId, callId, runDir, handedOver, log);
    return collected.finish;
  });
  return conclude(
    p,
    spawned.paths,
    spawned.childRunId,
    callId,
    outcome,
    runDir,
    handedOver,
    collected?.result() ?? { dir: null, files: [], deleted: [] },
  );
}

/** Evidence by reference: the observation as the parent's log holds it, with its hash. */
function evidenceOf(events: readonly EventEnvelope[], ids: readonly string[]): Evidence[] {
  const out: Evidence[] = [];
  for (const id of ids) {
    const e = events.find(
      (x): x is EventOf<'tool.observation'> => isEvent(x, 'tool.observation') && x.data.observationId === id,
    );
    if (!e) continue;
    const content = e.data.content;
    out.push({ id, sha256: sha256Hex(content), content });
  }
  return out;
}

function ruleCount(file: unknown): number {
  const f = (file ?? {}) as { allow?: unknown[]; ask?: unknown[]; deny?: unknown[] };
  return (f.allow?.length ?? 0) + (f.ask?.length ?? 0) + (f.deny?.length ?? 0);
}
