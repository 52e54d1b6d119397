import type { EventEnvelope } from '@gatehouse/shared';
import { resolveRun } from '../events/run-ref';
import { oneLine, visible } from '../approval/channels/screen';
import { RunLog } from '../events/store';
import { runUsage } from '../events/state';
import { treeUsage } from '../usage/tree-usage';
import { costText, usageLine } from './usage-line';
import { planAccount } from '../events/plan-account';
import { planEventLine, planLines, changesText } from './plan-lines';

export interface ShowOptions {
  /** Also print what each observation showed the model (`show --output`). */
  output?: boolean;
}

/** How much of one observation `show --output` prints: enough to read, never a flood. */
export const OUTPUT_LIMITS = { lines: 40, chars: 4000 } as const;

/** `gatehouse show RUN [--output]`: the run's timeline, one line per event, readable without the JSON. */
export function showCommand(ref: string, stateDirFlag: string | undefined, o: ShowOptions = {}): number {
  const { stateDir, runId } = resolveRun(ref, { stateDir: stateDirFlag });
  const events = RunLog.readEvents(stateDir, runId);
  const byId = new Map(events.map((e) => [e.id, e]));
  for (const e of events) {
    process.stdout.write(
      `${String(e.seq).padStart(4)}  ${e.ts.slice(11, 23)}  ${e.actor.padEnd(7)}  ${e.type.padEnd(24)}  ` +
        `${oneLine(describe(e, byId))}\n`,
    );
    if (o.output && e.type === 'tool.observation') process.stdout.write(observationText(e.data.content));
  }
  // A plan run: its plan told whole after the timeline (tasks, the gate, each task's end, recovery).
  const plan = planAccount(events);
  if (plan) for (const line of planLines(plan)) process.stdout.write(`${oneLine(line)}\n`);
  // The whole tree's usage, as run.completed records it; for a run not over yet, folded from the logs so far.
  const completed = events.findLast((e) => e.type === 'run.completed');
  const recorded = completed?.type === 'run.completed' ? completed.data.usage : undefined;
  const usage = recorded && completed === events.at(-1) ? recorded : runUsage(treeUsage(stateDir, runId, events));
  process.stdout.write(`usage: ${usageLine(usage)} (sub-agents included)\n`);
  return 0;
}

/**
 * An observation's text under its line, indented, cut to OUTPUT_LIMITS. It is what a command or the
 * repository printed: control and bidi characters are shown as escapes (they could rewrite the
 * terminal), carriage returns too.
 */
export function observationText(content: string): string {
  if (content === '') return '        | (empty)\n';
  const lines = content.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (out.length >= OUTPUT_LIMITS.lines || used >= OUTPUT_LIMITS.chars) break;
    const part = line.slice(0, OUTPUT_LIMITS.chars - used);
    out.push(`        | ${visible(part).replace(/\t/g, '    ')}`);
    used += part.length + (part.length === line.length ? 1 : 0);
  }
  const left = Math.max(0, content.length - used);
  if (left > 0)
    out.push(
      `        | … ${left} more character(s), ${lines.length - out.length} more line(s) not shown; ` +
        'the log has them all',
    );
  return `${out.join('\n')}\n`;
}

/** Who or what allowed an execution: the policy rule, or the person's grant (and through which channel). */
function authority(approvalId: string, byId: Map<string, EventEnvelope>): string {
  const a = byId.get(approvalId);
  if (a?.type === 'tool.approval') return `allowed by ${String(a.data.policyId)}`;
  if (a?.type === 'approval.granted') {
    const g = a.data;
    return `approved by ${g.approver} via ${g.channel} (scope ${g.scope}, request ${g.requestId})`;
  }
  return `approval ${approvalId}`;
}

function describe(e: EventEnvelope, byId: Map<string, EventEnvelope>): string {
  switch (e.type) {
    case 'approval.requested': {
      const r = e.data;
      return `${r.requestId} ${r.tool} asks by ${r.rule}: ${r.reason}`;
    }
    case 'approval.granted': {
      const g = e.data;
      const plan = g.changes ? ` with changes (${changesText(g.changes)})` : g.choice ? `, choice ${g.choice}` : '';
      return (
        `${g.requestId} approved by ${g.approver} via ${g.channel}, scope ` +
        `${g.scope}${plan}${g.reason ? `: ${g.reason}` : ''}`
      );
    }
    case 'approval.denied': {
      const g = e.data;
      const what = g.clarify ? 'asked a question' : 'denied';
      return `${g.requestId} ${what} by ${g.approver} via ${g.channel}: ${g.reason}`;
    }
    case 'run.paused': {
      const p = e.data;
      return (
        `waiting for ${p.pending.join(', ')}; workspace saved ` +
        `(${p.workspace.files.length + p.workspace.deleted.length} files)`
      );
    }
    case 'run.resumed': {
      const r = e.data;
      return `from seq ${r.fromSeq}, workspace from ${r.workspaceFrom} (${r.files.length} files)`;
    }
    case 'run.started':
      return `${String(e.data.task)} [${String(e.data.model)}]`;
    case 'tool.intent': {
      const task = e.data.taskId ? `[${e.data.taskId}] ` : '';
      return `${task}${e.data.tool} ${JSON.stringify(e.data.input).slice(0, 100)}`;
    }
    case 'tool.validation': {
      const v = e.data;
      return v.ok
        ? 'ok'
        : `rejected at ${v.stage}: ${v.errors
            .map((x) => x.message)
            .join('; ')
            .slice(0, 120)}`;
    }
    case 'tool.approval':
      return `${String(e.data.decision)} by ${String(e.data.policyId)}: ${String(e.data.reason)}`;
    case 'tool.execution.started':
      return (
        `${String(e.data.primitive)} ${JSON.stringify(e.data.input).slice(0, 100)} (timeout ` +
        `${String(e.data.timeoutMs)} ms) — ${authority(String(e.data.approvalId), byId)}`
      );
    case 'tool.execution.completed':
      return (
        `${String(e.data.status)} exit ${String(e.data.exitCode)} ${String(e.data.bytes)} ` +
        `bytes${e.data.truncated ? ' (truncated)' : ''} in ${String(e.data.durationMs)} ms`
      );
    case 'tool.observation':
      return `${String(e.data.observationId)} ${String(e.data.outcome)}`;
    case 'model.output': {
      const m = e.data;
      const u = m.usage;
      const used =
        ` (${u.inputTokens} in${u.cachedInputTokens ? `, ${u.cachedInputTokens} cached` : ''}, ${u.outputTokens} ` +
        `out${u.costUsd !== undefined ? `, $${u.costUsd.toFixed(4)}` : ''})`;
      return m.error
        ? `error ${m.error.kind}: ${m.error.message}${used}`
        : `${m.text.replace(/\s+/g, ' ').slice(0, 80)} [${m.toolCalls.map((c) => c.name).join(', ')}]${used}`;
    }
    case 'run.completed': {
      const d = e.data;
      const by = d.decidedBy ? `, decided by ${d.decidedBy}` : '';
      const cost = d.usage
        ? `; ${d.usage.inputTokens + d.usage.outputTokens} tokens, ${costText(d.usage.costUsd)}`
        : '';
      return `${String(d.status)} (${String(d.stopReason)}${by})${cost}`;
    }
    default:
      return planEventLine(e) ?? JSON.stringify(e.data).slice(0, 120);
  }
}
