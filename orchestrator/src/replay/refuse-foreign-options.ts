import type { ReplayMode } from '@gatehouse/shared';
import { ReplayError } from './replay-error';
import type { ReplayOptions } from './replay-types';

type ModeOption = 'policyFile' | 'modelSpec' | 'allowWrites';

const FLAG: Record<ModeOption, string> = {
  policyFile: '--policy (dry-run)',
  modelSpec: '--model (model)',
  allowWrites: '--allow-writes (execution)',
};

/**
 * An option of another mode means the person asked for something this mode does not do: a usage
 * error that says so, never silently ignored (a `--policy` given to trace decides nothing).
 */
export function refuseForeignOptions(mode: ReplayMode, o: ReplayOptions, own: readonly ModeOption[] = []): void {
  const given = (Object.keys(FLAG) as ModeOption[]).filter(
    (k) => !own.includes(k) && o[k] !== undefined && o[k] !== false,
  );
  if (given.length > 0)
    throw new ReplayError(
      'usage',
      `--mode ${mode} does not take ${given.map((k) => FLAG[k]).join(', ')}; drop ${
        given.length === 1 ? 'it' : 'them'
      }, or choose the mode ${given.length === 1 ? 'it belongs' : 'they belong'} to`,
    );
}
