import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isEvent, newId, sha256Hex, type EventDataOf, type EventEnvelope } from '@gatehouse/shared';
import type { AgentScope, Handoff } from '../agents/handoff';
import { normaliseGlob } from '../agents/handoff';
import { narrowPolicy } from '../agents/narrow';
import { childTask, handoffHash, type Evidence } from '../agents/packet';
import { RunLog } from '../events/store';
import { lastEvent, StateTracker } from '../events/state';
import { pathPattern } from '../policy/rules';
import type { Sandbox } from '../sandbox/index';
import { codingTools } from '../tools/builtin/index';
import type { Observation, ToolCall } from '../tools/pipeline';
import type { LogPort } from '../tools/ports';
import type { LocalResult } from '../tools/tool';
import type { LoopOutcome } from './loop';
import type { AgentRunResult, RunEnvironment, RunHandle } from './session';
import { tee } from './session';
import { restoreWorkspace, snapshotWorkspace, type WorkspaceSnapshot } from './workspace';

export interface ParentRun {
  env: RunEnvironment;
  runId: string;
  lineage: readonly string[];
  depth: number;
  maxDepth: number;
  maxParallel: number;
  repoDir: string;
  log: LogPort & { events(): readonly EventEnvelope[] };
  sandbox: Sandbox;
  /** The parent's own pipeline: the only way a child's changes reach the parent's workspace. */
  run: (call: ToolCall) => Promise<Observation>;
  drive: (env: RunEnvironment, h: RunHandle) => Promise<AgentRunResult>;
  /** The parent's run folder (its children's folders are its siblings). */
  runDir: string;
  /** What this agent may still hand down (its budget minus what it used and already handed out). */
  scope: () => AgentScope;
  /** Resumes a run by id with a finish hook built once its log is open (loop/resume.ts). */
  resume?: (
    runId: string,
    env: RunEnvironment,
    finish: (log: LogPort & { events(): readonly EventEnvelope[] }) => RunHandle['finish'],
  ) => Promise<AgentRunResult>;
}

/**
 * The runner behind the `delegate` tool. Each child gets its own run id and log (parentRunId on
 * every event), its own sandbox holding a copy of the parent's workspace as it is now, a context
 * built from the handoff alone, and the parent's policy narrowed to the handed-over paths. The
 * child's answer comes back as the observation; its changed files inside its paths are written
 * into the parent's workspace by the parent's own pipeline (read, then write_file: every write is
 * decided by the parent's policy). At most `maxParallel` children run at once.
 */
export interface Delegator {
  run(h: Handoff, callId: string, signal?: AbortSignal): Promise<LocalResult>;
  /** Resume: continues the child of an unfinished delegate call; undefined if it has none. */
  resume(callId: string, signal?: AbortSignal): Promise<LocalResult | undefined>;
}

export function createDelegator(p: ParentRun): Delegator {
  const slots = new Semaphore(p.maxParallel);
  // Children are numbered in call order, claimed before any waiting (parallel calls have not
  // logged their spawn yet); a resumed parent continues after the children its log holds.
  let nextChild: number | undefined;
  // Budgets of children started but not yet on record: parallel calls were each checked against
  // the same remainder, so the last word is here, before any waiting.
  const inFlight = { turns: 0, toolCalls: 0, tokens: 0 };
  return {
    async run(h, callId, signal) {
      const left = p.scope().remaining;
      const over = (['turns', 'toolCalls', 'tokens'] as const).find((k) => h.budget[k] > left[k] - inFlight[k]);
      if (over)
        return {
          ok: false,
          output: '',
          error: {
            code: 'budget_exceeds_parent',
            message: `budget.${over} ${h.budget[over]} is more than this agent has left once its other sub-agents' budgets are counted (${left[over] - inFlight[over]})`,
          },
        };
      for (const k of ['turns', 'toolCalls', 'tokens'] as const) inFlight[k] += h.budget[k];
      const index = nextChild ?? spawnedSoFar(p);
      nextChild = index + 1;
      const provider = p.env.provider.forChild?.(index) ?? p.env.provider;
      const release = await slots.acquire();
      let recorded = false;
      const unreserve = (): void => {
        if (recorded) return;
        recorded = true;
        for (const k of ['turns', 'toolCalls', 'tokens'] as const) inFlight[k] -= h.budget[k];
      };
      try {
        return await runChild(p, h, callId, provider, signal ?? p.env.signal, unreserve);
      } finally {
        unreserve();
        release();
      }
    },
    async resume(callId, signal) {
      const release = await slots.acquire();
      try {
        return await resumeChild(p, callId, signal ?? p.env.signal);
      } finally {
        release();
      }
    },
  };
}

/** How many children this run has started (a scripted child is picked by this index). */
function spawnedSoFar(p: ParentRun): number {
  return p.log.events().filter((e) => spawnedBy(e, p.runId)).length;
}

/** This run's own children (a child's log also holds the record of its own spawn). */
function spawnedBy(e: EventEnvelope, runId: string): boolean {
  return e.type === 'agent.spawned' && e.data.parentRunId === runId;
}

async function runChild(
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
  const raw = RunLog.create(p.env.stateDir, childRunId, { parentRunId: p.runId });
  const tracker = new StateTracker();
  const log = tee(raw, tracker, p.env.onEvent);
  const task = childTask(h, evidence, p.runId);
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
  const outcome = await p.drive(childEnv(p, h, provider, signal), {
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
): RunEnvironment {
  // A child's own refused-answer reports would land in the wrong log: it gets none.
  const { attachLog: _parentsOnly, ...env } = p.env;
  void _parentsOnly;
  return {
    ...env,
    provider,
    policy: narrowPolicy(p.env.policy, h.paths),
    budgets: {
      maxTurns: h.budget.turns,
      maxToolCalls: h.budget.toolCalls,
      maxTokens: h.budget.tokens,
      wallClockMs: h.budget.seconds * 1000,
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
    finish: async (sandbox: Sandbox, o: LoopOutcome): Promise<void> => {
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

/** After the child's run: a pause propagates up; otherwise its changes go through the parent's pipeline and its answer becomes the observation. */
async function conclude(
  p: ParentRun,
  paths: readonly string[],
  childRunId: string,
  callId: string,
  outcome: AgentRunResult,
  runDir: string,
  handedOver: WorkspaceSnapshot,
  result: WorkspaceSnapshot,
): Promise<LocalResult> {
  if (outcome.status === 'paused') {
    const first = outcome.pendingRequests[0];
    return {
      ok: false,
      output: `sub-agent ${childRunId} is paused waiting for approval`,
      pending: { runId: childRunId, requestId: first?.requestId ?? 'unknown' },
    };
  }
  const changes = changedByChild(runDir, handedOver, result);
  const withheld = outside(changes.all, paths);
  const recorded = p.log
    .events()
    .some((e) => e.type === 'agent.completed' && e.runId === p.runId && e.data.childRunId === childRunId);
  if (!recorded)
    p.log.append('agent.completed', 'runtime', {
      ...completed(p.runId, childRunId, callId, outcome, changes.all, withheld),
      denied: deniedIn(readChildEvents(p, childRunId)),
    });
  const applied = await applyToParent(p, callId, changes, withheld, runDir, result);
  // Applying a file can itself need a person's approval: the tree waits, and resume picks it up.
  const waiting = applied.find((a) => a.outcome === 'pending');
  if (waiting)
    return {
      ok: false,
      output: `applying ${waiting.file} waits for approval`,
      pending: { runId: p.runId, requestId: waiting.requestId ?? 'unknown' },
    };
  return report(childRunId, p.depth + 1, outcome, applied, withheld);
}

/** Resume: the child of an unfinished delegate call continues from its own log, in a fresh sandbox. */
async function resumeChild(p: ParentRun, callId: string, signal: AbortSignal): Promise<LocalResult | undefined> {
  const events = p.log.events();
  const ownSpawns = events.filter((e) => isEvent(e, 'agent.spawned')).filter((e) => spawnedBy(e, p.runId));
  const spawnedEvent = ownSpawns.find((e) => e.data.callId === callId);
  if (!spawnedEvent || !p.resume) return undefined;
  const spawned = spawnedEvent.data;
  const index = ownSpawns.indexOf(spawnedEvent);
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
  const outcome = await p.resume(spawned.childRunId, childEnv(p, h, provider, signal), (log) => {
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

/** What the child changed relative to what it was handed (not the parent's own earlier changes). */
function changedByChild(
  runDir: string,
  before: WorkspaceSnapshot,
  after: WorkspaceSnapshot,
): { written: string[]; deleted: string[]; all: string[] } {
  const read = (snap: WorkspaceSnapshot, f: string): Buffer | undefined => {
    if (!snap.dir || !snap.files.includes(f)) return undefined;
    try {
      return readFileSync(path.join(runDir, snap.dir, f));
    } catch {
      return undefined;
    }
  };
  const written = after.files.filter((f) => {
    const was = read(before, f);
    const now = read(after, f);
    return was === undefined || now === undefined || !was.equals(now);
  });
  const deleted = after.deleted.filter((f) => !before.deleted.includes(f));
  return { written, deleted, all: [...written, ...deleted] };
}

function outside(files: string[], paths: readonly string[]): string[] {
  const matchers = paths.map((g) => pathPattern(normaliseGlob(g)));
  return files.filter((f) => !matchers.some((m) => m.test(f)));
}

interface Applied {
  file: string;
  outcome: string;
  observation: string;
  requestId?: string;
}

/** Each changed file goes through the parent's pipeline: read (for the freshness check), then write. */
async function applyToParent(
  p: ParentRun,
  callId: string,
  changes: { written: string[]; deleted: string[] },
  withheld: string[],
  runDir: string,
  result: WorkspaceSnapshot,
): Promise<Applied[]> {
  const applied: Applied[] = [];
  let n = 0;
  const turn = 0;
  for (const file of changes.written) {
    if (withheld.includes(file) || !result.dir) continue;
    const bytes = readFileSync(path.join(runDir, result.dir, file));
    const content = bytes.toString('utf8');
    if (!Buffer.from(content, 'utf8').equals(bytes) || bytes.includes(0)) {
      applied.push({ file, outcome: 'withheld (binary: not applied through write_file)', observation: '' });
      continue;
    }
    await p.run({ callId: `${callId}.read${++n}`, turn, tool: 'read_file', input: { path: file } });
    const obs = await p.run({
      callId: `${callId}.write${n}`,
      turn,
      tool: 'write_file',
      input: { path: file, content },
    });
    applied.push({
      file,
      outcome: obs.outcome,
      observation: obs.id,
      ...(obs.requestId ? { requestId: obs.requestId } : {}),
    });
    if (obs.outcome === 'pending') return applied;
  }
  for (const file of changes.deleted) {
    if (withheld.includes(file)) continue;
    const obs = await p.run({
      callId: `${callId}.rm${++n}`,
      turn,
      tool: 'bash',
      input: { command: `rm -f -- '${file.replace(/'/g, `'\\''`)}'` },
    });
    applied.push({
      file: `${file} (deleted)`,
      outcome: obs.outcome,
      observation: obs.id,
      ...(obs.requestId ? { requestId: obs.requestId } : {}),
    });
    if (obs.outcome === 'pending') return applied;
  }
  return applied;
}

function report(
  childRunId: string,
  depth: number,
  o: AgentRunResult,
  applied: Applied[],
  withheld: string[],
): LocalResult {
  const lines = [`sub-agent ${childRunId} (depth ${depth}) ended ${o.status} (${o.stopReason})`];
  if (o.answer !== undefined) lines.push(`answer: ${o.answer}`);
  const cited = citedEvidence(o.answer);
  if (cited.length > 0) lines.push(`evidence it cites (observations of ${childRunId}): ${cited.join(', ')}`);
  if (applied.length > 0)
    lines.push(
      `its changes, through your write path: ${applied.map((a) => `${a.file} ${a.outcome}${a.observation ? ` (${a.observation})` : ''}`).join('; ')}`,
    );
  else lines.push('its changes: none');
  if (withheld.length > 0) lines.push(`withheld (outside its paths, not applied): ${withheld.join(', ')}`);
  lines.push(`its log: gatehouse show ${childRunId}`);
  const output = lines.join('\n');
  if (o.status === 'final') return { ok: true, output };
  return {
    ok: false,
    output,
    error: { code: `sub_agent_${o.status}`, message: `the sub-agent ended ${o.status}: ${o.stopReason}` },
  };
}

function completed(
  parentRunId: string,
  childRunId: string,
  callId: string,
  o: LoopOutcome,
  filesChanged: string[],
  withheld: string[],
): EventDataOf<'agent.completed'> {
  return {
    parentRunId,
    childRunId,
    callId,
    status: o.status,
    stopReason: o.stopReason,
    resultSha256: o.answer !== undefined ? sha256Hex(o.answer) : null,
    evidence: citedEvidence(o.answer),
    filesChanged,
    withheld,
  };
}

/** The child's refused actions, for the lineage: `bash: denied by deny[0] bash(git push*)`. */
function deniedIn(events: readonly EventEnvelope[]): string[] {
  const tools = new Map<string, string>();
  const out: string[] = [];
  for (const e of events) {
    if (e.type === 'tool.intent' && e.data.tool) tools.set(e.data.callId, e.data.tool);
    if (e.type === 'tool.approval' && e.data.decision === 'deny')
      out.push(`${tools.get(e.data.callId) ?? '?'}: denied by ${e.data.policyId}`);
    if (e.type === 'approval.denied')
      out.push(`${tools.get(e.data.callId) ?? '?'}: declined by ${e.data.approver} (${e.data.reason.slice(0, 120)})`);
  }
  return out.slice(0, 100);
}

function readChildEvents(p: ParentRun, childRunId: string): readonly EventEnvelope[] {
  try {
    return RunLog.readEvents(p.env.stateDir, childRunId);
  } catch {
    return [];
  }
}

function citedEvidence(answer: string | undefined): string[] {
  return [...new Set(answer?.match(/\bobs-\d+\b/g) ?? [])];
}

/** Evidence by reference: the observation as the parent's log holds it, with its hash. */
function evidenceOf(events: readonly EventEnvelope[], ids: readonly string[]): Evidence[] {
  const out: Evidence[] = [];
  const observations = events.filter((x) => isEvent(x, 'tool.observation'));
  for (const id of ids) {
    const e = observations.find((x) => x.data.observationId === id);
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

class Semaphore {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(n: number) {
    this.free = Math.max(1, n);
  }
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    return () => {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}
