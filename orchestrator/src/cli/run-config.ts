import { loadProjectConfig, readSetupEnv, type ConfigPolicy, type ResolvedConfig } from '../config/index';
import type { PolicySource } from '../policy/index';
import { DEFAULT_BUDGETS, type Budgets } from '../run/budgets';

/** What `gatehouse run` reads of the project config from its flags (run.ts's RunFlags). */
export interface RunConfigFlags {
  repo: string;
  config?: string;
  image?: string;
  /** `--check CMD`: trusted, like --image; it replaces every config's check. */
  check?: string;
  setupEnv?: string[];
  maxTurns: number;
  maxToolCalls: number;
  /** `--max-tokens`, `--max-cost` (US dollars), `--max-wall` (ms): absent when not given. */
  maxTokens?: number;
  maxCost?: number;
  maxWall?: number;
  /** Which budget flags were given on the command line (not defaults); absent: all of them count. */
  explicit?: { maxTurns: boolean; maxToolCalls: boolean };
}

/**
 * The project config and the setup secrets of a new run, read before anything starts: a missing
 * `--setup-env` variable, an unreadable or invalid config, all fail here as usage errors. What the
 * repository's config asked for and did not get is said on stderr, as for its policy.
 */
export function loadRunConfig(flags: RunConfigFlags): {
  config: ResolvedConfig;
  setupEnv: Record<string, string>;
  policy: { trustedPolicy?: PolicySource; repoPolicy?: PolicySource };
} {
  const setupEnv = readSetupEnv(flags.setupEnv ?? []);
  const config = loadProjectConfig({
    repoDir: flags.repo,
    ...(flags.config !== undefined ? { configFile: flags.config } : {}),
    ...(flags.image !== undefined ? { image: flags.image } : {}),
    ...(flags.check !== undefined ? { check: flags.check } : {}),
  });
  if (config.ignored.length > 0)
    process.stderr.write(
      `gatehouse: not taken from the repository's config (pass --config FILE to trust it): ` +
        `${config.ignored.join(', ')}\n`,
    );
  return { config, setupEnv, policy: policyInputs(config.policy) };
}

/** The config's policy as resolveRunPolicy takes it: trusted (like --policy) or the repository's. */
export function policyInputs(policy: ConfigPolicy | undefined): {
  trustedPolicy?: PolicySource;
  repoPolicy?: PolicySource;
} {
  if (!policy) return {};
  const source: PolicySource =
    'file' in policy ? { file: policy.file } : { inline: policy.inline, source: policy.source };
  return policy.trusted ? { trustedPolicy: source } : { repoPolicy: source };
}

/** A new run's budgets: a flag given on the command line, else the config's, else the defaults. */
export function runBudgets(flags: RunConfigFlags, config: ResolvedConfig): Budgets {
  const given = flags.explicit ?? { maxTurns: true, maxToolCalls: true };
  return {
    ...DEFAULT_BUDGETS,
    ...config.budgets,
    ...(given.maxTurns ? { maxTurns: flags.maxTurns } : {}),
    ...(given.maxToolCalls ? { maxToolCalls: flags.maxToolCalls } : {}),
    ...budgetFlags(flags),
  };
}

/** The budgets `--max-tokens`, `--max-cost` and `--max-wall` set (those without a default), in the run's units. */
export function budgetFlags(flags: Pick<RunConfigFlags, 'maxTokens' | 'maxCost' | 'maxWall'>): Partial<Budgets> {
  return {
    ...(flags.maxTokens !== undefined ? { maxTokens: flags.maxTokens } : {}),
    ...(flags.maxCost !== undefined ? { maxCostUsd: flags.maxCost } : {}),
    ...(flags.maxWall !== undefined ? { wallClockMs: flags.maxWall } : {}),
  };
}
