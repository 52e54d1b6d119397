import type { RunReport } from './report-schema';
import { codeSpan, fencedBlock } from './markdown-safe';
import {
  agentsSection,
  answerSection,
  approvalsSection,
  checkSection,
  commandsSection,
  feedbackSection,
  filesSection,
  refusalsSection,
  usageSection,
} from './report-sections';
import { planSection } from './report-plan-markdown';

/**
 * GitHub refuses a comment over 65,536 characters; the step summary has its own limit (1 MiB). The
 * sections' budgets below add up to less than this, with room for headings and the fixed text, so a
 * report always fits whatever the run wrote.
 */
export const MARKDOWN_MAX_CHARS = 55_000;

const BUDGET = {
  task: 1_000,
  answer: 6_000,
  check: 5_000,
  feedback: 3_000,
  files: 4_000,
  diff: 16_000,
  commands: 5_000,
  approvals: 2_500,
  refusals: 3_500,
  agents: 3_000,
  plan: 4_000,
} as const;

const STATUS_MARK: Record<RunReport['outcome']['status'], string> = {
  final: '✅',
  partial: '⚠️',
  failed: '❌',
  cancelled: '⏹️',
  paused: '⏸️',
  running: '⏳',
};

/** The report as Markdown for a pull-request comment or `$GITHUB_STEP_SUMMARY`. */
export function renderMarkdown(r: RunReport): string {
  const jsonHint = `\`gatehouse report ${r.run.runId} --format json\``;
  const o = r.outcome;
  const tools = Object.entries(r.run.toolCallsByTool)
    .map(([t, n]) => `${codeSpan(t, 40)} ${n}`)
    .slice(0, 20)
    .join(', ');
  const task = fencedBlock(r.run.task, 'text', BUDGET.task);
  const unfinished = o.status === 'running' || o.status === 'paused';
  const decidedBy = o.decidedBy
    ? `decided by ${codeSpan(o.decidedBy, 64)}`
    : unfinished
      ? 'not decided yet'
      : 'the rule that decided is not recorded';
  const parts = [
    `## ${STATUS_MARK[o.status]} gatehouse run ${codeSpan(r.run.runId, 80)}: ${o.status}`,
    `**Outcome:** ${o.status}${o.exitCode !== null ? ` (exit ${o.exitCode})` : ''}` +
      `${o.stopReason ? `, stop reason ${codeSpan(o.stopReason, 200)}` : ''}; ${decidedBy}.`,
    `**Model:** ${r.run.model ? codeSpan(r.run.model, 100) : 'not recorded'}` +
      `${r.run.mode ? `, mode ${codeSpan(r.run.mode, 40)}` : ''}; ${r.run.turns} turn(s), ` +
      `${r.run.toolCalls} tool call(s)${tools ? ` (${tools})` : ''}.`,
    `**Task:**\n\n${task.markdown}${task.cut ? '\n\n_The task is cut._' : ''}`,
    `### Answer\n\n${answerSection(r, BUDGET.answer, jsonHint)}`,
    `### Check\n\n${checkSection(r, BUDGET.check)}`,
  ];
  if (r.plan) parts.push(`### Plan (${r.plan.tasks.length} tasks)\n\n${planSection(r.plan, BUDGET.plan, jsonHint)}`);
  const feedback = feedbackSection(r, BUDGET.feedback, jsonHint);
  if (feedback !== null) parts.push(`### Sent back to the model\n\n${feedback}`);
  parts.push(
    `### Files changed${r.changes.files ? ` (${r.changes.files.length})` : ''}\n\n` +
      filesSection(r, BUDGET.files, BUDGET.diff, jsonHint),
    `### Commands (${r.commands.length})\n\n${commandsSection(r, BUDGET.commands, jsonHint)}`,
    `### Approvals\n\n${approvalsSection(r, BUDGET.approvals, jsonHint)}`,
    `### Denied or refused\n\n${refusalsSection(r, BUDGET.refusals, jsonHint)}`,
    `### Tokens and cost\n\n${usageSection(r)}`,
    `### Sub-agents\n\n${agentsSection(r, BUDGET.agents, jsonHint)}`,
    `_gatehouse report, format ${r.format} v${r.version}; ${jsonHint} gives every fact._`,
  );
  return `${parts.join('\n\n')}\n`;
}
