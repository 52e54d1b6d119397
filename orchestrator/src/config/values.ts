import { DEFAULT_LIMITS } from '../sandbox/container';
import { BUDGET_KEYS, BUDGET_KEY_NAMES } from './budget-keys';
import { egressEntryText, parseEgressEntry } from './egress-entry';
import { DEFAULT_IMAGE } from './image-ref';
import type { ConfigFileRead } from './read-config';
import type { Limits } from './schema';
import type { ResolvedConfig } from './types';

/** The settings part of a resolved config (what narrowing works on). */
export type ConfigValues = Omit<ResolvedConfig, 'source' | 'ignored' | 'sha256'>;

const MIB = 1024 * 1024;

/**
 * The limits a sandbox gets when no config sets them: the ceiling a repository's config is held to
 * when the trusted configuration names none. No disk limit is set by default.
 */
export const DEFAULT_CONFIG_LIMITS: Limits = {
  memoryMb: DEFAULT_LIMITS.memoryBytes / MIB,
  cpus: DEFAULT_LIMITS.cpus,
  pids: DEFAULT_LIMITS.pids,
};

/** A trusted file's settings (or the defaults, without one), with `--image` over the file's image. */
export function trustedValues(read: ConfigFileRead | undefined, imageFlag: string | undefined): ConfigValues {
  const c = read?.config ?? {};
  const values: ConfigValues = {
    image: imageFlag ?? c.image ?? DEFAULT_IMAGE,
    setup: c.setup ?? [],
    egress: {
      setup: normalised(c.egress?.setup),
      agent: normalised(c.egress?.agent),
      deny: normalised(c.egress?.deny),
    },
    copy: { exclude: c.copy?.exclude ?? [], include: c.copy?.include ?? [] },
    limits: { ...c.limits },
    budgets: budgetsOf(c.budgets),
    ...(c.check !== undefined ? { check: c.check } : {}),
    ...(c.recovery !== undefined ? { recovery: c.recovery } : {}),
    ...(c.mcp !== undefined && Object.keys(c.mcp).length > 0 ? { mcp: c.mcp } : {}),
    ...(c.prices !== undefined && read ? { prices: { prices: c.prices, source: read.file } } : {}),
  };
  if (read?.policyFile) values.policy = { file: read.policyFile, trusted: true };
  else if (typeof c.policy === 'object')
    values.policy = { inline: c.policy, source: `${read!.file} (policy)`, trusted: true };
  return values;
}

/** Config budgets in the run's units. */
export function budgetsOf(b: Partial<Record<keyof typeof BUDGET_KEYS, number>> | undefined): ConfigValues['budgets'] {
  const out: ConfigValues['budgets'] = {};
  for (const key of BUDGET_KEY_NAMES) {
    const v = b?.[key];
    if (v !== undefined) out[BUDGET_KEYS[key].budget] = v * BUDGET_KEYS[key].perUnit;
  }
  return out;
}

/** Entries in one spelling, so the same host listed twice (or in two cases) is one entry. */
export function normalised(entries: readonly string[] | undefined): string[] {
  const out = new Set<string>();
  for (const e of entries ?? []) {
    const r = parseEgressEntry(e);
    out.add(r.ok ? egressEntryText(r.entry) : e);
  }
  return [...out];
}
