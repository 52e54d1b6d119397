import { Redactor } from '../events/redact';
import type { RunEnvironment } from './types';

/**
 * The redactor of a run's log: the environment's credentials (by their names) and every
 * `--setup-env` value, whatever its variable is called — naming it on the command line is what
 * declares it a secret (PIP_INDEX_URL with a password in it looks like no credential by name).
 */
export function runRedactor(o: Pick<RunEnvironment, 'setupEnv'>): Redactor {
  const setup = Object.entries(o.setupEnv ?? {}).map(([name, value]) => ({ name, value }));
  return Redactor.fromEnv(process.env, setup);
}
