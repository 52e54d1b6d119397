import { DEFAULT_BUDGETS, type Budgets } from '../run/budgets';
import { BUDGET_KEYS, BUDGET_KEY_NAMES } from './budget-keys';
import { egressAllowedBy } from './egress-covers';
import { parseEgressEntry, type EgressEntry } from './egress-entry';
import { narrowRecovery } from './narrow-recovery';
import type { ConfigFileRead } from './read-config';
import type { Limits } from './schema';
import { budgetsOf, DEFAULT_CONFIG_LIMITS, normalised, type ConfigValues } from './values';

const LIMIT_KEYS = ['memoryMb', 'cpus', 'pids', 'diskMb'] as const satisfies readonly (keyof Limits)[];

/**
 * The trusted settings narrowed by the repository's own config (docs/config.md, "Narrowing"). The
 * repository is what the agent works on: it may be hostile, and an agent may have written its
 * config. So from it gatehouse takes only what cannot widen what the person running it allowed:
 * fewer egress hosts, more deny entries and copy excludes, lower limits and budgets, fewer
 * retries and no shorter waits (narrow-recovery.ts), a check
 * command if none is set, and deny and ask rules of a policy (never prices). Everything else it asked for is
 * listed in `ignored`, with its key.
 */
export function narrowByRepository(
  trusted: ConfigValues,
  repo: ConfigFileRead,
): { values: ConfigValues; ignored: string[] } {
  const c = repo.config ?? {};
  const ignored: string[] = [];
  const values: ConfigValues = structuredClone(trusted);

  // The image and the setup commands run before the model, outside the policy gate, with the setup
  // allowlist and the --setup-env secrets: only the person running gatehouse chooses them.
  if (c.image !== undefined && c.image !== trusted.image) ignored.push(`image ${c.image}`);
  if (c.setup !== undefined && JSON.stringify(c.setup) !== JSON.stringify(trusted.setup))
    ignored.push(`setup ${JSON.stringify(c.setup)}`);
  // A check only adds a condition on "final"; it runs where the agent's own commands do.
  if (c.check !== undefined) {
    if (trusted.check === undefined) values.check = c.check;
    else if (c.check !== trusted.check) ignored.push(`check ${JSON.stringify(c.check)}`);
  }

  for (const phase of ['setup', 'agent'] as const) {
    const asked = c.egress?.[phase];
    if (asked === undefined) continue;
    const allowed = parsed(trusted.egress[phase]);
    values.egress[phase] = normalised(asked).filter((text) => {
      const entry = parseEgressEntry(text);
      const kept = entry.ok && egressAllowedBy(allowed, entry.entry);
      if (!kept) ignored.push(`egress.${phase} ${text}`);
      return kept;
    });
  }
  values.egress.deny = normalised([...trusted.egress.deny, ...(c.egress?.deny ?? [])]);
  values.copy.exclude = [...new Set([...trusted.copy.exclude, ...(c.copy?.exclude ?? [])])];
  // Paths .gitignore leaves out are the person's local files (.env, credentials, build output), not
  // the repository's: the repository may only keep includes the trusted configuration lists.
  if (c.copy?.include !== undefined) {
    values.copy.include = c.copy.include.filter((glob) => {
      const kept = trusted.copy.include.includes(glob);
      if (!kept) ignored.push(`copy.include ${glob}`);
      return kept;
    });
  }

  for (const key of LIMIT_KEYS) {
    const asked = c.limits?.[key];
    if (asked === undefined) continue;
    const ceiling = trusted.limits[key] ?? DEFAULT_CONFIG_LIMITS[key];
    if (ceiling === undefined || asked <= ceiling) values.limits[key] = asked;
    else ignored.push(`limits.${key} ${asked} (above ${ceiling})`);
  }
  const askedBudgets = budgetsOf(c.budgets);
  for (const key of BUDGET_KEY_NAMES) {
    const { budget, perUnit } = BUDGET_KEYS[key];
    const asked = askedBudgets[budget];
    if (asked === undefined) continue;
    const ceiling = trusted.budgets[budget] ?? (DEFAULT_BUDGETS as Partial<Budgets>)[budget];
    if (ceiling === undefined || asked <= ceiling) values.budgets[budget] = asked;
    else ignored.push(`budgets.${key} ${asked / perUnit} (above ${ceiling / perUnit})`);
  }

  const recovery = narrowRecovery(trusted.recovery, c.recovery, ignored);
  if (recovery !== undefined) values.recovery = recovery;

  // A price decides what the cost budget counts: a repository that priced its model at 0 would
  // never be stopped by it. Only the person running gatehouse sets prices.
  for (const key of Object.keys(c.prices ?? {})) ignored.push(`prices.${key} (only the trusted config sets prices)`);

  // An MCP server's command runs in the sandbox outside the policy gate, and a URL server is reached
  // from the orchestrator: like setup, only the person running gatehouse declares them.
  for (const name of Object.keys(c.mcp ?? {}))
    if (JSON.stringify(c.mcp?.[name]) !== JSON.stringify(trusted.mcp?.[name]))
      ignored.push(`mcp.${name} (only the trusted config declares MCP servers)`);

  // The policy is narrowed where policies are (policy/index.ts): passed on as untrusted, unless
  // the trusted configuration has its own, which the repository cannot add to (as with --policy).
  if (c.policy !== undefined) {
    if (trusted.policy) ignored.push('policy (the trusted configuration has its own)');
    else if (repo.policyFile) values.policy = { file: repo.policyFile, trusted: false };
    else values.policy = { inline: c.policy, source: `${repo.file} (policy)`, trusted: false };
  }
  return { values, ignored };
}

function parsed(entries: readonly string[]): EgressEntry[] {
  return entries.flatMap((e) => {
    const r = parseEgressEntry(e);
    return r.ok ? [r.entry] : [];
  });
}
