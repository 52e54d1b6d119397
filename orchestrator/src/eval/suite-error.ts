import { GatehouseError } from '../errors';
import { problemText, type FileProblem } from '../problems/file-problems';

/**
 * The suite cannot be run as written: a usage error (exit 2), and nothing has run. Every problem
 * found is in it at once, each with its file and JSON path, so one edit fixes them all.
 */
export class SuiteError extends GatehouseError {
  readonly kind = 'usage';
  readonly problems: readonly FileProblem[];

  constructor(file: string, problems: readonly FileProblem[]) {
    super(
      `the eval suite ${file} is not valid (${problems.length} problem${problems.length === 1 ? '' : 's'}); ` +
        'nothing was run:\n' +
        `${problems.map((p) => `  ${problemText(p).replace(/\n/g, '\n    ')}`).join('\n')}\n` +
        'Fix them (docs/eval.md lists every key of a suite).',
    );
    this.name = 'SuiteError';
    this.problems = problems;
  }
}
