import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { installationKey } from '../events/installation';
import type { LogKey } from '../events/key';
import { lastEvent } from '../events/state';
import { checkSalvageRecord } from '../sandbox/salvage-record';
import type { Sandbox } from '../sandbox/index';
import { loadWorkspace, WORKSPACE_STATE_DIR, type WorkspaceManifest } from '../sandbox/workspace-save';
import type { ToolRegistry } from '../tools/registry';
import { restoreWorkspace } from '../loop/workspace';

export type RestorePoint =
  | {
      from: EventDataOf<'run.resumed'>['workspaceFrom'];
      files: string[];
      manifest?: WorkspaceManifest;
      legacy?: (s: Sandbox) => Promise<void>;
      /** A saved sandbox that was not used, and why (the run continues from its last checkpoint). */
      ignored?: string;
    }
  | { refusal: string };

/**
 * What a resumed run's workspace is rebuilt from, checked before anything starts:
 *  1. the dead sandbox's workspace the reaper saved, when its record verifies with the
 *     installation key for this run and this log (salvage-record.ts) and nothing was recorded
 *     after it;
 *  2. else the last `workspace.checkpoint`, which must cover every call that completed and could
 *     change the workspace;
 *  3. else (logs from before checkpoints) the pause snapshot, or the repository when nothing changed.
 * A salvage nothing vouches for (planted, edited, another run's) is never restored: it is ignored,
 * which loses nothing when a checkpoint covers every completed call, and otherwise resume refuses
 * naming it. A saved workspace that is missing, changed or incomplete is a refusal that says what
 * and why.
 */
export async function chooseWorkspace(
  runDir: string,
  events: readonly EventEnvelope[],
  registry: ToolRegistry,
  key: LogKey | undefined = installationKey(),
): Promise<RestorePoint> {
  const lastRecorded = Math.max(
    -1,
    ...events.filter((e) => e.type === 'workspace.checkpoint' || e.type === 'run.resumed').map((e) => e.seq),
  );
  let salvageProblem = '';
  for (const salvage of salvages(runDir)) {
    // Named after the log position it follows: older than what the log recorded since, not wanted.
    if (salvage.seq < lastRecorded) break;
    const vouched = await checkSalvageRecord(key, runDir, salvage.file, events);
    if ('problem' in vouched) {
      salvageProblem ||= `the saved sandbox ${salvage.file} is not used: ${vouched.problem}`;
      continue;
    }
    // Older than what the log recorded since: the newer record wins (and older salvages are older still).
    if (vouched.record.afterSeq < lastRecorded) break;
    try {
      const manifest = await loadWorkspace(runDir, salvage.file, vouched.record.manifestSha256);
      if (manifest.skipped.length === 0) return { from: 'previous-sandbox', files: listed(manifest), manifest };
      salvageProblem = `the saved sandbox (${salvage.file}) lacks ${describeSkipped(manifest)}`;
    } catch (e) {
      salvageProblem = `the saved sandbox (${salvage.file}) cannot be used: ${(e as Error).message}`;
    }
    break;
  }
  const chosen = await fromLog(runDir, events, registry, salvageProblem);
  return salvageProblem && !('refusal' in chosen) ? { ...chosen, ignored: salvageProblem } : chosen;
}

async function fromLog(
  runDir: string,
  events: readonly EventEnvelope[],
  registry: ToolRegistry,
  salvageProblem: string,
): Promise<RestorePoint> {
  const changed = changingCalls(events, registry);
  const lastChange = changed.at(-1);
  const checkpoint = lastEvent(events, 'workspace.checkpoint');
  const advice =
    'The run cannot continue with its completed work; ' +
    'start a new run (the log and everything saved are kept for review).';
  if (checkpoint) {
    const c = checkpoint.data;
    let manifest: WorkspaceManifest;
    try {
      manifest = await loadWorkspace(runDir, c.manifest, c.manifestSha256);
    } catch (e) {
      return {
        refusal:
          `checkpoint ${c.checkpoint} cannot be restored: ${(e as Error).message}. ` +
          `${salvageProblem ? `${salvageProblem}. ` : ''}${advice}`,
      };
    }
    if (manifest.skipped.length > 0)
      return { refusal: `checkpoint ${c.checkpoint} lacks ${describeSkipped(manifest)}. ${advice}` };
    if (lastChange && lastChange.seq > c.afterSeq)
      return {
        refusal: uncovered(
          lastChange,
          `the last checkpoint (${c.checkpoint}) was saved before it`,
          salvageProblem,
          advice,
        ),
      };
    return { from: 'checkpoint', files: listed(manifest), manifest };
  }
  const paused = lastEvent(events, 'run.paused');
  if (paused && (!lastChange || lastChange.seq < paused.seq)) {
    const snap = paused.data.workspace;
    if (snap.dir && !existsSync(path.join(runDir, snap.dir)))
      return { refusal: `the workspace saved at the pause (${snap.dir}) is missing. ${advice}` };
    return {
      from: 'pause-snapshot',
      files: [...snap.files, ...snap.deleted],
      legacy: (s) => restoreWorkspace(s, runDir, snap),
    };
  }
  if (lastChange) return { refusal: uncovered(lastChange, 'no checkpoint was saved', salvageProblem, advice) };
  return { from: 'repository', files: [] };
}

function uncovered(
  call: { seq: number; tool: string; callId: string },
  why: string,
  salvageProblem: string,
  advice: string,
): string {
  return (
    `${call.tool} call ${call.callId} completed (event ${call.seq}) and may have changed the workspace, but ${why} ` +
    `and the sandbox it ran in was not saved${salvageProblem ? ` (${salvageProblem})` : ''}. ${advice}`
  );
}

/**
 * Completed calls that could have changed the workspace, in log order. A call whose result never
 * came back (`lost`) from a sandbox the log says was lost is not one: whatever it did to the
 * workspace died with that sandbox, and the model was told its outcome is unknown (its effects
 * outside the workspace, if any, are not undone by any restore).
 */
export function changingCalls(
  events: readonly EventEnvelope[],
  registry: ToolRegistry,
): Array<{ seq: number; tool: string; callId: string }> {
  const calls = new Map<string, { tool?: string; input?: unknown; sandboxId?: string }>();
  const lostSandboxes = new Set(events.flatMap((e) => (e.type === 'sandbox.lost' ? [e.data.sandboxId] : [])));
  const out: Array<{ seq: number; tool: string; callId: string }> = [];
  for (const e of events) {
    if (e.type === 'tool.intent') calls.set(e.data.callId, { tool: e.data.tool });
    else if (e.type === 'tool.validation' && e.data.ok)
      calls.set(e.data.callId, { ...calls.get(e.data.callId), input: e.data.input });
    else if (e.type === 'tool.execution.started' && e.data.sandboxId !== undefined)
      calls.set(e.data.callId, { ...calls.get(e.data.callId), sandboxId: e.data.sandboxId });
    else if (e.type === 'tool.execution.completed' && e.data.status !== 'rejected') {
      const c = calls.get(e.data.callId);
      if (e.data.status === 'lost' && c?.sandboxId !== undefined && lostSandboxes.has(c.sandboxId)) continue;
      const tool = c?.tool ? registry.get(c.tool) : undefined;
      const changes = !tool || c?.input === undefined || (tool.sideEffect !== 'delegate' && !tool.isReadOnly(c.input));
      if (changes) out.push({ seq: e.seq, tool: c?.tool ?? 'unknown', callId: e.data.callId });
    }
  }
  return out;
}

/** The reaper's salvages in the run's folder, newest (by the log position in the name) first. */
function salvages(runDir: string): Array<{ file: string; seq: number }> {
  const ws = path.join(runDir, WORKSPACE_STATE_DIR);
  if (!existsSync(ws)) return [];
  const found = readdirSync(ws)
    .map((n) => /^salvage-(\d+)\.json$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ file: path.join(WORKSPACE_STATE_DIR, m[0]), seq: Number(m[1]) }));
  // Bounded: a folder stuffed with planted names costs one failed check each, at most 100.
  return found.sort((a, b) => b.seq - a.seq).slice(0, 100);
}

function listed(m: WorkspaceManifest): string[] {
  return [...m.files.map((f) => f.path), ...m.deleted];
}

function describeSkipped(m: WorkspaceManifest): string {
  return `the content of ${m.skipped.map((s) => `${s.path} (${s.size} bytes: ${s.reason})`).join(', ')}`;
}
