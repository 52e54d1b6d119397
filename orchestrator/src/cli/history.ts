import type { EventDataOf, EventEnvelope } from '@gatehouse/shared';
import { resolveStateDir } from '../events/paths';
import { listRuns } from '../events/runs';
import { RunLog } from '../events/store';

/** `gatehouse runs`: one line per run, newest first. */
export function runsCommand(stateDirFlag: string | undefined, json: boolean): number {
  const runs = listRuns(resolveStateDir(stateDirFlag));
  runs.sort((a, b) => String(b.startedAt).localeCompare(String(a.startedAt)));
  if (json) {
    process.stdout.write(`${JSON.stringify(runs)}\n`);
    return 0;
  }
  if (runs.length === 0) process.stdout.write('no runs yet\n');
  for (const r of runs) process.stdout.write(`${r.runId}  ${r.startedAt ?? '?'}  ${r.status ?? r.lastType ?? '?'}\n`);
  return 0;
}

/** `gatehouse show RUN`: the run's timeline, one line per event, readable without the JSON. */
export function showCommand(runId: string, stateDirFlag: string | undefined): number {
  const events = RunLog.readEvents(resolveStateDir(stateDirFlag), runId);
  for (const e of events) process.stdout.write(`${String(e.seq).padStart(4)}  ${e.ts.slice(11, 23)}  ${e.actor.padEnd(7)}  ${e.type.padEnd(24)}  ${describe(e)}\n`);
  return 0;
}

function describe(e: EventEnvelope): string {
  const d = e.data as Record<string, unknown>;
  switch (e.type) {
    case 'run.started':
      return `${String(d.task)} [${String(d.model)}]`;
    case 'tool.intent':
      return `${String(d.tool)} ${JSON.stringify(d.input).slice(0, 100)}`;
    case 'tool.validation': {
      const v = d as EventDataOf<'tool.validation'>;
      return v.ok ? 'ok' : `rejected at ${v.stage}: ${v.errors.map((x) => x.message).join('; ').slice(0, 120)}`;
    }
    case 'tool.approval':
      return `${String(d.decision)} by ${String(d.policyId)}: ${String(d.reason)}`;
    case 'tool.execution.started':
      return `${String(d.primitive)} ${JSON.stringify(d.input).slice(0, 100)} (timeout ${String(d.timeoutMs)} ms)`;
    case 'tool.execution.completed':
      return `${String(d.status)} exit ${String(d.exitCode)} ${String(d.bytes)} bytes${d.truncated ? ' (truncated)' : ''} in ${String(d.durationMs)} ms`;
    case 'tool.observation':
      return `${String(d.observationId)} ${String(d.outcome)}`;
    case 'model.output': {
      const m = d as EventDataOf<'model.output'>;
      return m.error ? `error ${m.error.kind}: ${m.error.message}` : `${m.text.replace(/\s+/g, ' ').slice(0, 80)} [${m.toolCalls.map((c) => c.name).join(', ')}]`;
    }
    case 'run.completed':
      return `${String(d.status)} (${String(d.stopReason)})`;
    default:
      return JSON.stringify(d).slice(0, 120);
  }
}
