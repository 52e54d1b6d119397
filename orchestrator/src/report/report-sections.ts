import type { ReportAgent, ReportApproval, ReportCommand, ReportRefusal, RunReport } from './report-schema';
import { codeSpan, details, fencedBlock } from './markdown-safe';

/**
 * The Markdown report's sections, each within its own size budget (render-markdown.ts adds them up
 * to stay well under GitHub's 65,536-character limit). Every string from the log goes through
 * codeSpan or fencedBlock; no line starts with a code span (markdown-safe.ts says why).
 */

/** Room kept in every list for the line that says how many more there were. */
const MORE_NOTE = 200;

/** Lines up to `max` characters in all, then one line saying how many were left out and where they are. */
export function boundedList(lines: readonly string[], max: number, whereAll: string): string {
  const out: string[] = [];
  let size = 0;
  for (const line of lines) {
    if (size + line.length + 1 > max - MORE_NOTE) break;
    out.push(line);
    size += line.length + 1;
  }
  const left = lines.length - out.length;
  if (left > 0) out.push(`- … and ${left} more (${whereAll})`);
  return out.join('\n');
}

const count = (n: number) => n.toLocaleString('en-US');

export function answerSection(r: RunReport, max: number, jsonHint: string): string {
  if (r.answer === null)
    return r.outcome.status === 'running' || r.outcome.status === 'paused'
      ? '_The run has not finished._'
      : '_No answer._';
  const block = fencedBlock(r.answer, 'text', max - 300);
  return block.cut
    ? `${block.markdown}\n\n_The answer is cut at ${count(max - 300)} characters; ${jsonHint} has all of it._`
    : block.markdown;
}

export function checkSection(r: RunReport, max: number): string {
  const c = r.check;
  if (c.result === 'none') return 'No check configured.';
  if (c.result === 'not_recorded')
    return `Configured: ${codeSpan(c.configured ?? '', 300)}; its result is not recorded (the log has no run.check).`;
  const runs = c.runs
    .slice(-10)
    .map(
      (x) =>
        `- ${x.passed ? 'passed' : 'failed'}: ${codeSpan(x.command, 300)}, ` +
        `${x.exitCode === null ? 'no exit code' : `exit ${x.exitCode}`}, run by ${x.ranBy}` +
        ` (call ${codeSpan(x.callId, 80)}${x.observationId ? `, ${codeSpan(x.observationId, 40)}` : ''})` +
        `${x.reason ? `: ${codeSpan(x.reason, 300)}` : ''}`,
    );
  const head =
    `**Result: ${c.result}**${c.configured ? ` (configured: ${codeSpan(c.configured, 300)})` : ''}` +
    `${c.runs.length > 10 ? `; the last 10 of ${c.runs.length} runs:` : ''}\n\n` +
    boundedList(runs, Math.floor(max / 2), "the run's log has them all");
  if (c.output === null) return head;
  const room = Math.max(0, max - head.length - 400);
  const out = fencedBlock(c.output, 'text', room, 'tail');
  const note = out.cut ? `\n\n_Only the end is shown; the whole output is in the run's log._` : '';
  return `${head}\n\n${details('Output of the last check run', `${out.markdown}${note}`)}`;
}

export function feedbackSection(r: RunReport, max: number, jsonHint: string): string | null {
  if (r.feedback.length === 0) return null;
  const lines: string[] = [];
  for (const f of r.feedback) {
    lines.push(`- turn ${f.turn} (${f.kind ?? 'kind not recorded'}): ${codeSpan(f.reason, 400)}`);
    for (const c of f.claims ?? [])
      lines.push(
        `  - ${c.supported ? 'supported' : '**not supported**'}: ${codeSpan(c.claim, 300)}` +
          `${c.cites.length ? `, cites ${codeSpan(c.cites.join(', '), 100)}` : ', cites nothing'}` +
          `${c.reason ? `: ${codeSpan(c.reason, 200)}` : ''}`,
      );
  }
  return boundedList(lines, max, jsonHint);
}

export function filesSection(r: RunReport, max: number, diffMax: number, jsonHint: string): string {
  const ch = r.changes;
  if (ch.files === null) return '_The run has not finished: its changes are not exported yet._';
  const head =
    ch.files.length === 0
      ? 'None.'
      : `${ch.applied ? 'Applied to the repository.' : 'Not applied to the repository.'}\n\n` +
        boundedList(
          ch.files.map((f) => `- file ${codeSpan(f, 200)}`),
          max,
          jsonHint,
        );
  if (ch.diffError !== null) return `${head}\n\n_The diff could not be read: ${codeSpan(ch.diffError, 300)}._`;
  if (ch.diff === null) return head;
  const lines = ch.diff === '' ? 0 : ch.diff.replace(/\n$/, '').split('\n').length;
  const block = fencedBlock(ch.diff, 'diff', diffMax);
  const diffPath = codeSpan(`runs/${r.run.runId}/${ch.diffFile ?? ''}`, 200);
  const where = `the whole diff is ${diffPath} in gatehouse's state directory`;
  const note =
    block.cut || ch.diffTruncated ? `\n\n_The diff is cut (${count(ch.diffBytes ?? 0)} bytes in all); ${where}._` : '';
  return `${head}\n\n${details(`Diff: ${count(lines)}${ch.diffTruncated ? '+' : ''} lines`, block.markdown + note)}`;
}

function commandLine(c: ReportCommand): string {
  const result =
    c.exitCode !== null
      ? `exit ${c.exitCode}`
      : c.status === 'not_run'
        ? `not run${c.outcome ? ` (${c.outcome})` : ''}`
        : c.status;
  return (
    `- ${result}: ${codeSpan(c.command, 300)}${c.ranBy === 'gatehouse' ? ', run by gatehouse' : ''}` +
    ` (call ${codeSpan(c.callId, 80)}${c.observationId ? `, ${codeSpan(c.observationId, 40)}` : ''})`
  );
}

export function commandsSection(r: RunReport, max: number, jsonHint: string): string {
  if (r.commands.length === 0) return 'None.';
  return boundedList(r.commands.map(commandLine), max, jsonHint);
}

function approvalLine(a: ReportApproval): string {
  const what = `${codeSpan(a.tool, 60)} request ${codeSpan(a.requestId, 80)}, asked by rule ${codeSpan(a.rule, 100)}`;
  if (a.status === 'pending') return `- pending: ${what}`;
  return (
    `- ${a.status} by ${codeSpan(a.approver ?? 'unknown', 80)} via ${codeSpan(a.channel ?? 'unknown', 20)}` +
    `${a.scope ? ` (scope ${a.scope})` : ''}: ${what}${a.reason ? `; reason ${codeSpan(a.reason, 200)}` : ''}`
  );
}

export function approvalsSection(r: RunReport, max: number, jsonHint: string): string {
  if (r.approvals.length === 0) return 'None asked.';
  return boundedList(r.approvals.map(approvalLine), max, jsonHint);
}

const REFUSAL_LABEL: Record<ReportRefusal['kind'], string> = {
  policy: 'denied by policy',
  person: 'denied by a person',
  rejected: 'rejected',
  answer_rejected: 'approval answer refused',
  apply: 'not applied',
  not_exported: 'not exported',
  sub_agent: 'sub-agent',
};

function refusalLine(x: ReportRefusal): string {
  const parts = [
    x.tool !== null ? codeSpan(x.tool, 60) : null,
    x.callId !== null ? `call ${codeSpan(x.callId, 80)}` : null,
    x.path !== null ? `file ${codeSpan(x.path, 200)}` : null,
    x.by !== null ? `by ${codeSpan(x.by, 120)}` : null,
  ].filter((p) => p !== null);
  return `- ${REFUSAL_LABEL[x.kind]}${parts.length ? ` ${parts.join(' ')}` : ''}: ${codeSpan(x.reason, 300)}`;
}

export function refusalsSection(r: RunReport, max: number, jsonHint: string): string {
  if (r.refusals.length === 0) return 'Nothing.';
  return boundedList(r.refusals.map(refusalLine), max, jsonHint);
}

export function usageSection(r: RunReport): string {
  const u = r.usage;
  const cost =
    u.costUsd !== null
      ? `$${u.costUsd.toFixed(4)}`
      : u.source === 'run'
        ? 'unknown (no price for the model)'
        : 'not recorded';
  const budget = u.budgets
    ? `\n\nBudgets: ${count(u.budgets.maxTokens ?? 0)} tokens` +
      `${u.budgets.maxCostUsd !== null ? `, $${u.budgets.maxCostUsd}` : ', no cost limit'}.`
    : '';
  const source =
    u.source === 'turns' ? "\n\n_Summed from the model's turns: the log's run.completed has no usage._" : '';
  return (
    `| input tokens | output tokens | cached input tokens | cost |\n|---:|---:|---:|---:|\n` +
    `| ${count(u.inputTokens)} | ${count(u.outputTokens)} | ` +
    `${u.cachedInputTokens === null ? 'not recorded' : count(u.cachedInputTokens)} | ${cost} |${source}${budget}`
  );
}

export function agentsSection(r: RunReport, max: number, jsonHint: string): string {
  if (r.agents.children.length === 0) return 'None.';
  const lines: string[] = [];
  const visit = (a: ReportAgent, level: number) => {
    const pad = '  '.repeat(level);
    lines.push(
      `${pad}- run ${codeSpan(a.runId, 80)}: ${a.status}${a.stopReason ? ` (${codeSpan(a.stopReason, 80)})` : ''}, ` +
        `${a.actions} action(s); task ${codeSpan(a.task, 120)}`,
    );
    for (const p of a.problems) lines.push(`${pad}  - problem: ${codeSpan(p, 200)}`);
    for (const c of a.children) visit(c, level + 1);
  };
  visit(r.agents, 0);
  return boundedList(lines, max, jsonHint);
}
