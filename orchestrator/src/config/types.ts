import type { Budgets } from '../run/budgets';
import type { McpServers } from './mcp-schema';
import type { Limits } from './schema';
import type { PriceOverrides } from '../usage/price-for';
import type { RecoveryConfig } from '../plan/recovery-recipes';

/**
 * The policy a config names: a file, or an object written inline. `trusted` says whether it came
 * from the trusted configuration (used whole, like --policy) or from the repository's own config
 * (only its deny and ask rules and a stricter mode are taken, as for .gatehouse/policy.json).
 */
export type ConfigPolicy = { file: string; trusted: boolean } | { inline: unknown; source: string; trusted: boolean };

/** The configuration a run uses: the trusted one (or the defaults), narrowed by the repository's. */
export interface ResolvedConfig {
  /** Where it came from: `defaults`, a file, or a trusted file narrowed by the repository's. */
  source: string;
  /** `preset:NAME` or an image reference. */
  image: string;
  setup: string[];
  check?: string;
  /** Entries in their normalised form (lower case): `registry.npmjs.org`, `*.example.com:443`, `10.0.0.0/8`. */
  egress: { setup: string[]; agent: string[]; deny: string[] };
  copy: { exclude: string[]; include: string[] };
  /** Only what a config set; the sandbox's defaults fill in the rest. */
  limits: Limits;
  /** In the run's units (wallClockMs); only what a config set. */
  budgets: Partial<Budgets>;
  /** Model prices from the trusted config, over the built-in table (usage/price-for.ts). */
  prices?: PriceOverrides;
  policy?: ConfigPolicy;
  /** MCP servers (docs/mcp.md), from the trusted config only. */
  mcp?: McpServers;
  /** Plan mode's recovery recipes as configured (absent: the defaults); plan/recovery-recipes.ts fills in the rest. */
  recovery?: RecoveryConfig;
  /** What the repository's config asked for and did not get, each with its key, for the person to see. */
  ignored: string[];
  /** Of the inputs (trusted file, repository file, --image), for the run record. */
  sha256: string;
}
