import { codeSpan, details, fencedBlock } from '../report/markdown-safe';
import type { EvalReport, EvalTaskResult } from './eval-report';

/**
 * The eval as Markdown, for a pull-request comment or `$GITHUB_STEP_SUMMARY`, safe as `gatehouse
 * report`'s is (report/markdown-safe.ts): whatever a run's log or the suite file says (stop reasons,
 * errors, names, paths) goes only inside code, so it cannot become markup; and in a table cell a
 * `|` is escaped so it cannot split the row. Under MAX_CHARS whatever the suite holds: rows that do
 * not fit are counted, and the JSON has them.
 */
export const EVAL_MARKDOWN_MAX_CHARS = 55_000;
const ROWS_BUDGET = 40_000;
const ERRORS_BUDGET = 8_000;

/** Untrusted text in a table cell: a code span whose `|`s cannot end the cell (GFM reads `\|` there as `|`). */
function cell(text: string, max: number): string {
  return codeSpan(text, max).replace(/\|/g, '\\|');
}

const int = (n: number): string => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const usd = (c: number | null): string => (c === null ? 'unknown' : `$${c.toFixed(4)}`);
const percent = (r: number): string => `${(r * 100).toFixed(1).replace(/\.0$/, '')} %`;
const maybe = (n: number | null, f: (n: number) => string): string => (n === null ? 'none' : f(n));

function result(t: EvalTaskResult): string {
  if (t.passed) return '✅ passed';
  const mark = t.status === 'paused' ? '⏸️' : t.status === 'error' || t.status === 'not_run' ? '⚠️' : '❌';
  return `${mark} ${t.reason === null ? 'not passed' : cell(t.reason, 80)}`;
}

function row(t: EvalTaskResult): string {
  const ran = t.runId !== null;
  return [
    cell(t.id, 64),
    result(t),
    cell(t.status, 20),
    t.decidedBy === null ? '—' : cell(t.decidedBy, 40),
    ran ? int(t.turns) : '—',
    ran ? int(t.toolCalls) : '—',
    ran ? `${int(t.inputTokens)} / ${int(t.outputTokens)}` : '—',
    ran ? usd(t.costUsd) : '—',
    seconds(t.wallMs),
    t.runId === null ? '—' : cell(t.runId, 80),
  ].join(' | ');
}

export function renderEvalMarkdown(r: EvalReport): string {
  const { totals: s, medians: m } = r;
  const name = r.suite.name === null ? '' : ` ${codeSpan(r.suite.name, 100)}`;
  const head = [
    `## ${s.failed === 0 ? '✅' : '❌'} gatehouse eval${name}: ${s.passed} of ${s.tasks} passed (${percent(s.passRate)})`,
    `**Suite:** ${codeSpan(r.suite.file, 300)}; ${r.concurrency} at a time; ${seconds(r.wallMs)} in all.`,
  ];
  const rows: string[] = [];
  let used = 0;
  for (const t of r.tasks) {
    const line = `| ${row(t)} |`;
    if (used + line.length > ROWS_BUDGET) break;
    rows.push(line);
    used += line.length + 1;
  }
  const table = [
    '| task | result | status | decided by | turns | tool calls | tokens in / out | cost | time | run |',
    '|---|---|---|---|--:|--:|--:|--:|--:|---|',
    ...rows,
  ].join('\n');
  const left = r.tasks.length - rows.length;
  const parts = [
    ...head,
    table + (left > 0 ? `\n\n_${left} more task(s) do not fit here: \`gatehouse eval --json\` lists every one._` : ''),
    `**Totals:** ${int(s.turns)} turns, ${int(s.toolCalls)} tool calls, ${int(s.inputTokens)} input and ` +
      `${int(s.outputTokens)} output tokens, cost ${usd(s.costUsd)}` +
      `${s.costUnknown > 0 ? ` (${s.costUnknown} task(s) with no known price left out)` : ''}, ` +
      `${seconds(s.wallMs)} of runs.`,
    `**Medians:** ${maybe(m.turns, int)} turns, ${maybe(m.toolCalls, int)} tool calls, ` +
      `${maybe(m.inputTokens, int)} input and ${maybe(m.outputTokens, int)} output tokens, cost ` +
      `${m.costUsd === null ? 'unknown' : usd(m.costUsd)}, ${maybe(m.wallMs, seconds)} per task.`,
  ];
  const errors = errorsSection(r.tasks);
  if (errors) parts.push(`### Tasks that did not start\n\n${errors}`);
  parts.push(`_gatehouse eval, format ${r.format} v${r.version}; \`gatehouse eval --json\` gives every field._`);
  return `${parts.join('\n\n')}\n`;
}

/** Why runs did not start, each folded, within a budget. */
function errorsSection(tasks: readonly EvalTaskResult[]): string | null {
  const failed = tasks.filter((t) => t.error !== null);
  if (failed.length === 0) return null;
  const out: string[] = [];
  let used = 0;
  for (const t of failed) {
    const block = details(
      `${t.id}: what gatehouse run said`,
      fencedBlock(t.error ?? '', 'text', 1_500, 'tail').markdown,
    );
    if (used + block.length > ERRORS_BUDGET) {
      out.push(`_${failed.length - out.length} more: \`gatehouse eval --json\` has each task's error._`);
      break;
    }
    out.push(block);
    used += block.length;
  }
  return out.join('\n\n');
}
