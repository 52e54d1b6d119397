import path from 'node:path';
import { canonicalJson, sha256Hex } from '@gatehouse/shared';
import { ConfigError, loadProjectConfig, readSetupEnv, type ConfigPolicy, type ResolvedConfig } from '../config/index';
import { narrowByRepository } from '../config/narrow';
import { readConfigFile } from '../config/read-config';
import type { PolicySource } from '../policy/index';
import { DEFAULT_BUDGETS, type Budgets } from '../run/budgets';

/** What `gatehouse run` reads of the project config from its flags (run.ts's RunFlags). */
export interface RunConfigFlags {
  repo: string;
  config?: string;
  /**
   * A config that can only narrow, read like the repository's own (`gatehouse mcp serve` passes its
   * caller's config here). Its policy is not read: whoever passes it puts that into --policy.
   */
  narrowConfig?: string;
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
  let config = loadProjectConfig({
    repoDir: flags.repo,
    ...(flags.config !== undefined ? { configFile: flags.config } : {}),
    ...(flags.image !== undefined ? { image: flags.image } : {}),
    ...(flags.check !== undefined ? { check: flags.check } : {}),
  });
  if (flags.narrowConfig !== undefined) config = narrowedBy(config, flags.narrowConfig, flags.repo);
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

/** The config narrowed further by one more untrusted file (narrow.ts), its policy left out (see RunConfigFlags). */
function narrowedBy(config: ResolvedConfig, file: string, repoDir: string): ResolvedConfig {
  const read = readConfigFile(path.resolve(file), path.resolve(repoDir));
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  const { policy: _left, ...rest } = read.config ?? {};
  const { values, ignored } = narrowByRepository(config, { ...read, config: rest });
  return {
    ...values,
    source: `${config.source} narrowed by ${read.file}`,
    ignored: [...config.ignored, ...ignored.map((i) => `${read.file}: ${i}`)],
    sha256: sha256Hex(canonicalJson({ config: config.sha256, narrowedBy: read.raw ?? null })),
  };
}
