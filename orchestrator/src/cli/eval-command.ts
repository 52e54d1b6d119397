import { InvalidArgumentError, type Command } from 'commander';
import { oneLine } from '../approval/channels/screen';
import { loadSuite } from '../eval/load-suite';
import { preflightSuite } from '../eval/preflight-suite';
import { runSuite } from '../eval/run-suite';
import { cliTaskRunner, type TaskRunner } from '../eval/spawn-run';
import { renderEvalMarkdown } from '../eval/render-eval-markdown';
import type { EvalReport, EvalTaskResult } from '../eval/eval-report';
import { writeFileAtomic } from './atomic-write';
import { exitCodeFor } from './exit-codes';
import { parseCount } from './option-parsers';
import { UsageError } from './usage';

export type EvalFormat = 'md' | 'json';

export interface EvalFlags {
  model?: string;
  concurrency: number;
  format?: EvalFormat;
  json?: boolean;
  out?: string;
  stateDir?: string;
}

function parseFormat(value: string): EvalFormat {
  if (value === 'md' || value === 'json') return value;
  throw new InvalidArgumentError('must be md or json');
}

/** `--json`, else `--format`, else an `--out` file's extension (.json), else Markdown. */
function formatOf(f: EvalFlags): EvalFormat {
  if (f.json && f.format === 'md') throw new UsageError('--json and --format md ask for two formats; give one');
  if (f.json) return 'json';
  if (f.format) return f.format;
  return f.out !== undefined && /\.json$/i.test(f.out) ? 'json' : 'md';
}

/** How this process was started, to start `gatehouse run` the same way (a debugger's flags left out). */
function selfCommand(): { node: string; args: string[] } {
  const entry = process.argv[1];
  if (!entry) throw new UsageError('cannot tell how gatehouse was started, to start its runs');
  return { node: process.execPath, args: [...process.execArgv.filter((a) => !a.startsWith('--inspect')), entry] };
}

const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;

/** One line on stderr as each task ends: the log's words made one printable line. */
function progressLine(r: EvalTaskResult, done: number, of: number): string {
  const what = r.passed ? 'passed' : `not passed: ${oneLine(r.reason ?? r.status)}`;
  if (r.runId === null && r.error === null) return `eval: [${done}/${of}] ${r.id}: ${what}\n`;
  const facts =
    r.runId === null
      ? oneLine(r.error ?? '').slice(0, 300)
      : `${r.status}, ${count(r.turns, 'turn')}, ${count(r.toolCalls, 'tool call')}, ` +
        `${(r.wallMs / 1000).toFixed(1)} s, run ${r.runId}`;
  return `eval: [${done}/${of}] ${r.id}: ${what} (${facts})\n`;
}

/**
 * `gatehouse eval SUITE.json`: exit 0 when every task passed, 1 when some did not, 2 for a suite
 * that is not valid (nothing run), 130 when cancelled. The report goes to stdout or `--out`.
 */
export async function evalCommand(file: string, f: EvalFlags, runTask?: TaskRunner): Promise<number> {
  const format = formatOf(f);
  const suite = loadSuite(file, f.model !== undefined ? { model: f.model } : {});
  await preflightSuite(suite);
  const ac = new AbortController();
  const stop = (): void => {
    if (ac.signal.aborted) process.exit(exitCodeFor('cancelled'));
    process.stderr.write('eval: cancelling the running tasks… (again to quit at once)\n');
    ac.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  let report: EvalReport;
  try {
    report = await runSuite(suite, {
      runTask: runTask ?? cliTaskRunner(selfCommand()),
      concurrency: f.concurrency,
      ...(f.stateDir !== undefined ? { stateDir: f.stateDir } : {}),
      signal: ac.signal,
      onResult: (r, done, of) => process.stderr.write(progressLine(r, done, of)),
    });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  const text = format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderEvalMarkdown(report);
  if (f.out !== undefined) writeFileAtomic(f.out, text);
  else process.stdout.write(text);
  if (ac.signal.aborted) return exitCodeFor('cancelled');
  return report.totals.failed === 0 ? exitCodeFor('ok') : exitCodeFor('failed');
}

export function registerEvalCommand(program: Command, h: { stateDirHelp: string }): void {
  program
    .command('eval')
    .description(
      'run a suite of tasks (each a real gatehouse run, headless, decided by its check) and report pass rate, ' +
        'turns, tool calls, tokens, cost and time per task and in all (exit 0 all passed, 1 some did not, 2 bad suite)',
    )
    .argument('<suite>', 'the suite file (JSON, docs/eval.md)')
    .option('--model <spec>', 'the model of every task that names none (over the suite\'s "model")')
    .option('--concurrency <n>', 'tasks run at once', parseCount, 1)
    .option('--format <format>', 'md | json (default: md, or json for an --out FILE.json)', parseFormat)
    .option('--json', 'the same as --format json')
    .option('--out <file>', 'write the report to FILE (atomically) instead of stdout')
    .option('--state-dir <dir>', h.stateDirHelp)
    .action(async (file: string, f: EvalFlags) => {
      process.exitCode = await evalCommand(file, f);
    });
}
