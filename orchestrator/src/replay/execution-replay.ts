import { sha256Hex, type EventDataOf, type InvocationResult, type PrimitiveName } from '@gatehouse/shared';
import { runtimeApproval } from '../approval/runtime-approval';
import type { LogPort, SandboxPort } from '../tools/ports';
import type { RecordedExecution } from './recorded-executions';
import type { ReplayOutcome } from './replay-types';

type Facts = EventDataOf<'replay.execution'>['recorded'];

/** The output cap the pipeline asks for (tools/pipeline/invoke-plan.ts): the same cap gives the same output. */
const RESULT_CAP = 1024 * 1024;

export interface ExecutionReplayDeps {
  /** The fresh sandbox, made from the recorded base; nothing else is ever run on. */
  sandbox: SandboxPort;
  isReadOnly(call: RecordedExecution): boolean;
  allowWrites: boolean;
  log: LogPort;
  signal: AbortSignal;
  say(line: string): void;
}

/**
 * Runs a recorded run's executions again, in order, in a fresh sandbox, and compares each result
 * with the recorded one (`replay.execution`: same, drift, or skipped and why).
 *
 * What each call is sent is exactly what the recorded run sent its executor (`tool.execution.started`),
 * so it is the same action (the same action hash). For a call to see the workspace the recorded one
 * saw, the calls before it must have had their effects: read-only calls run; a call that is not
 * read-only runs only with `allowWrites`, and without it, every read-only call after a skipped call
 * that changed (or may have changed) the workspace is skipped too, since it would not see what the
 * recorded call saw. Calls the orchestrator itself ran (read_artifact, delegate) are not re-run.
 */
export async function replayExecutions(
  calls: readonly RecordedExecution[],
  d: ExecutionReplayDeps,
): Promise<ReplayOutcome> {
  const outcome: ReplayOutcome = { compared: 0, differed: 0, skipped: 0, verdict: 'match' };
  /** The first call not re-run that changed the workspace: later calls would not see what they saw. */
  let notReplayed: RecordedExecution | undefined;
  for (const call of calls) {
    if (d.signal.aborted) throw new Error('the replay was cancelled');
    const readOnly = d.isReadOnly(call);
    const recorded = recordedFacts(call);
    const base = { callId: call.callId, tool: call.tool, readOnly, recorded };
    const skip = skipReason(call, readOnly, d.allowWrites, notReplayed);
    if (skip) {
      if (!readOnly && !notReplayed && mayHaveChanged(call)) notReplayed = call;
      outcome.skipped++;
      d.log.append('replay.execution', 'runtime', { ...base, outcome: 'skipped', replayed: null, reason: skip });
      d.say(`${label(call)}: skipped: ${skip}`);
      continue;
    }
    const result = await rerun(d, call);
    const replayed: Facts = {
      status: result.status,
      exitCode: result.exitCode ?? null,
      outputSha256: sha256Hex(result.output),
      filesChanged: [...(result.filesChanged ?? [])].sort(),
    };
    const drift = differences(recorded, replayed);
    outcome.compared++;
    if (drift.differ) outcome.differed++;
    d.log.append('replay.execution', 'runtime', {
      ...base,
      outcome: drift.differ ? 'drift' : 'same',
      replayed,
      ...(drift.note ? { reason: drift.note } : {}),
    });
    d.say(`${label(call)}: ${drift.differ ? 'drift' : 'same'}${drift.note ? ` (${drift.note})` : ''}`);
  }
  if (outcome.differed > 0) outcome.verdict = 'drift';
  return outcome;
}

function skipReason(
  call: RecordedExecution,
  readOnly: boolean,
  allowWrites: boolean,
  notReplayed: RecordedExecution | undefined,
): string | undefined {
  if (call.started.executor !== 'sandbox') {
    return `${call.tool} ran in gatehouse itself, not in the sandbox: there is nothing to run again`;
  }
  if (!call.completed) return 'the recorded run has no result for it (the log ends before it finished)';
  if (call.completed.status === 'lost') return 'the recorded call got no result (its sandbox was lost)';
  if (!readOnly && !allowWrites) {
    return 'it is not read-only: --allow-writes runs it too (inside the fresh sandbox only)';
  }
  if (notReplayed) {
    return (
      `the workspace it saw had been changed by ${notReplayed.callId} (${notReplayed.tool}), which was not run ` +
      'again: --allow-writes runs that too (inside the fresh sandbox only)'
    );
  }
  return undefined;
}

/** A write primitive reports the files it changed; a command's report may be incomplete (a skipped snapshot). */
function mayHaveChanged(call: RecordedExecution): boolean {
  if (call.started.executor !== 'sandbox') return false;
  if (call.started.primitive === 'exec' || !call.completed) return true;
  return call.completed.filesChanged.length > 0;
}

async function rerun(d: ExecutionReplayDeps, call: RecordedExecution): Promise<InvocationResult> {
  const primitive = call.started.primitive as PrimitiveName;
  const input = call.started.input as never;
  return d.sandbox.invoke(primitive, input, {
    // The same action the recorded run was granted, approved for this replay by the person who asked for it.
    approval: runtimeApproval(primitive, input, `replay:${call.callId}`),
    timeoutMs: call.started.timeoutMs,
    outputCap: RESULT_CAP,
    signal: d.signal,
  });
}

function recordedFacts(call: RecordedExecution): Facts {
  const c = call.completed;
  return {
    status: c?.status ?? 'unknown',
    exitCode: c?.exitCode ?? null,
    outputSha256: c?.outputSha256 ?? null,
    filesChanged: [...(c?.filesChanged ?? [])].sort(),
  };
}

/**
 * Same means the same status, exit code, files changed and output (its SHA-256). A log from before
 * outputSha256 was recorded compares the rest and says the output was not compared.
 */
function differences(then: Facts, now: Facts): { differ: boolean; note?: string } {
  const found: string[] = [];
  if (then.status !== now.status) found.push(`status ${then.status} → ${now.status}`);
  if (then.exitCode !== now.exitCode) found.push(`exit code ${String(then.exitCode)} → ${String(now.exitCode)}`);
  if (then.outputSha256 !== null && then.outputSha256 !== now.outputSha256) found.push('the output differs');
  if (then.filesChanged.join('\0') !== now.filesChanged.join('\0')) {
    found.push(`files changed [${then.filesChanged.join(', ')}] → [${now.filesChanged.join(', ')}]`);
  }
  const unhashed =
    then.outputSha256 === null ? 'the recorded run has no output hash (a log from before outputSha256)' : undefined;
  if (found.length > 0) return { differ: true, note: [...found, ...(unhashed ? [unhashed] : [])].join('; ') };
  return unhashed ? { differ: false, note: `${unhashed}: the output was not compared` } : { differ: false };
}

function label(call: RecordedExecution): string {
  return `${call.callId} (${call.tool})`;
}
