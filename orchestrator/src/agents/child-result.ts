import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sha256Hex, type EventDataOf, type EventEnvelope } from '@gatehouse/shared';
import { RunLog } from '../events/store';
import type { LoopOutcome } from '../loop/loop';
import type { WorkspaceSnapshot } from '../loop/workspace';
import { pathPattern } from '../policy/rules';
import type { AgentRunResult } from '../run/types';
import type { CallResult } from '../tools/pipeline';
import type { LocalResult } from '../tools/tool';
import { normaliseGlob } from './handoff';
import type { ParentRun } from './parent-run';

/**
 * After the child's run: a pause propagates up; otherwise its changes go through the parent's pipeline and its
 * answer becomes the observation.
 */
export async function conclude(
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

/** What the child changed relative to what it was handed (not the parent's own earlier changes). */
export function changedByChild(
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

export function outside(files: string[], paths: readonly string[]): string[] {
  const matchers = paths.map((g) => pathPattern(normaliseGlob(g)));
  return files.filter((f) => !matchers.some((m) => m.test(f)));
}

interface Applied {
  file: string;
  outcome: string;
  /**
   * The parent's observation of the write (`obs-N`); none when the file was not written or the write waits for
   * approval.
   */
  observation?: string;
  requestId?: string;
}

function appliedOf(file: string, result: CallResult): Applied {
  if (result.kind === 'observed')
    return { file, outcome: result.observation.outcome, observation: result.observation.id };
  return { file, outcome: 'pending', ...(result.requestId ? { requestId: result.requestId } : {}) };
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
      applied.push({ file, outcome: 'withheld (binary: not applied through write_file)' });
      continue;
    }
    await p.run({ callId: `${callId}.read${++n}`, turn, tool: 'read_file', input: { path: file } });
    const written = await p.run({
      callId: `${callId}.write${n}`,
      turn,
      tool: 'write_file',
      input: { path: file, content },
    });
    applied.push(appliedOf(file, written));
    if (written.kind === 'pending') return applied;
  }
  for (const file of changes.deleted) {
    if (withheld.includes(file)) continue;
    const removed = await p.run({
      callId: `${callId}.rm${++n}`,
      turn,
      tool: 'bash',
      input: { command: `rm -f -- '${file.replace(/'/g, `'\\''`)}'` },
    });
    applied.push(appliedOf(`${file} (deleted)`, removed));
    if (removed.kind === 'pending') return applied;
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
      'its changes, through your write path: ' +
        `${applied.map((a) => `${a.file} ${a.outcome}${a.observation ? ` (${a.observation})` : ''}`).join('; ')}`,
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

export function completed(
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
export function deniedIn(events: readonly EventEnvelope[]): string[] {
  const tools = new Map<string, string>();
  const out: string[] = [];
  for (const e of events) {
    const d = e.data as {
      callId?: string;
      tool?: string;
      decision?: string;
      policyId?: string;
      approver?: string;
      reason?: string;
    };
    if (e.type === 'tool.intent' && d.callId && d.tool) tools.set(d.callId, d.tool);
    if (e.type === 'tool.approval' && d.decision === 'deny')
      out.push(`${tools.get(d.callId ?? '') ?? '?'}: denied by ${d.policyId ?? '?'}`);
    if (e.type === 'approval.denied')
      out.push(
        `${tools.get(d.callId ?? '') ?? '?'}: declined by ${d.approver ?? '?'} (${(d.reason ?? '').slice(0, 120)})`,
      );
  }
  return out.slice(0, 100);
}

export function readChildEvents(p: ParentRun, childRunId: string): readonly EventEnvelope[] {
  try {
    return RunLog.readEvents(p.env.stateDir, childRunId);
  } catch {
    return [];
  }
}

function citedEvidence(answer: string | undefined): string[] {
  return [...new Set(answer?.match(/\bobs-\d+\b/g) ?? [])];
}
