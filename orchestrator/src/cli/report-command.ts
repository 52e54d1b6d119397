import { InvalidArgumentError, type Command } from 'commander';
import { resolveRun } from '../events/run-ref';
import { buildReport } from '../report/build-report';
import { renderHtml } from '../report/render-html';
import { renderMarkdown } from '../report/render-markdown';
import { writeFileAtomic } from './atomic-write';
import { exitCodeFor } from './exit-codes';
import { STORE_HELP } from './store-flag';

export type ReportFormat = 'md' | 'json' | 'html';

export interface ReportOptions {
  format: ReportFormat;
  out?: string;
  stateDir?: string;
}

function parseFormat(value: string): ReportFormat {
  if (value === 'md' || value === 'json' || value === 'html') return value;
  throw new InvalidArgumentError('must be md, json or html');
}

/** The report of a run in a format, as text. */
export function reportText(stateDir: string, runId: string, format: ReportFormat): string {
  // Markdown shows no verify verdict: its logs are not audited (json and html carry it).
  const report = buildReport(stateDir, runId, { verify: format !== 'md' });
  if (format === 'json') return `${JSON.stringify(report, null, 2)}\n`;
  return format === 'html' ? renderHtml(report) : renderMarkdown(report);
}

/**
 * `gatehouse report RUN [--format md|json|html] [--out FILE]`: exit 0 when written; a run that is not
 * found exits 1, an ambiguous prefix, a bad format or an --out that cannot be written exits 2 (the
 * errors are thrown to main.ts, which picks the code from their kind).
 */
export function reportCommand(ref: string, o: ReportOptions): number {
  const { stateDir, runId } = resolveRun(ref, { stateDir: o.stateDir });
  const text = reportText(stateDir, runId, o.format);
  if (o.out !== undefined) writeFileAtomic(o.out, text);
  else process.stdout.write(text);
  return exitCodeFor('ok');
}

interface Help {
  stateDirHelp: string;
  runRef: string;
}

export function registerReportCommand(program: Command, h: Help): void {
  program
    .command('report')
    .description(
      "a run's report: outcome and the rule that decided it, answer, check, changes, commands, approvals, refusals, " +
        'tokens and cost, sub-agents (Markdown for a pull request or $GITHUB_STEP_SUMMARY, JSON, or one ' +
        'self-contained HTML page of the whole tree with the timeline of every call)',
    )
    .argument('<run>', h.runRef)
    .option('--format <format>', 'md | json | html', parseFormat, 'md' as const)
    .option('--out <file>', 'write to FILE (atomically) instead of stdout')
    .option('--state-dir <dir>', h.stateDirHelp)
    .option('--store <url>', STORE_HELP)
    .action((run: string, o: ReportOptions) => {
      process.exitCode = reportCommand(run, o);
    });
}
