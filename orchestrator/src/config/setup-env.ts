import { ConfigError } from './errors';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The values of `--setup-env NAME` flags, read from the orchestrator's environment now, so a
 * missing one stops the run before anything starts. They are secrets: only the setup phase gets
 * them, never the agent, the log or the model.
 */
export function readSetupEnv(names: readonly string[], env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const bad = names.filter((n) => !NAME.test(n));
  if (bad.length)
    throw new ConfigError(
      `--setup-env takes a variable name (letters, digits, _), not ${bad.map((b) => JSON.stringify(b)).join(', ')}`,
    );
  const missing = names.filter((n) => env[n] === undefined);
  if (missing.length)
    throw new ConfigError(
      `--setup-env ${missing.join(', ')}: not set in gatehouse's environment; export ` +
        `${missing.length === 1 ? 'it' : 'them'} first (e.g. ${missing[0]}=… gatehouse run …)`,
    );
  const out: Record<string, string> = {};
  for (const n of names) out[n] = env[n]!;
  return out;
}
