import { GatehouseError } from '../errors';
import { problemText, type FileProblem } from '../problems/file-problems';

/**
 * A config (or a flag that sets part of one) is not valid: nothing runs. Every problem found is
 * in it at once, each with its file and JSON path, so one edit fixes them all.
 */
export class ConfigError extends GatehouseError {
  readonly kind = 'usage';
  readonly problems: readonly FileProblem[];

  constructor(problems: readonly FileProblem[] | string) {
    const list = typeof problems === 'string' ? [] : problems;
    super(
      typeof problems === 'string'
        ? problems
        : `the project config is not valid (${list.length} problem${list.length === 1 ? '' : 's'}):\n` +
            `${list.map((p) => `  ${problemText(p)}`).join('\n')}\n` +
            'Fix them (docs/config.md lists every key), or pass another file with --config FILE.',
    );
    this.problems = list;
  }
}

/** The repository's config cannot be trusted to be its own (a symbolic link): refused, nothing runs. */
export class ConfigRefusedError extends GatehouseError {
  readonly kind = 'refused';
}
