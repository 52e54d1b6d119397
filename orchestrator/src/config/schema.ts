import { z } from 'zod';
import { BUDGET_KEYS, BUDGET_KEY_NAMES, type BudgetKey } from './budget-keys';
import { parseEgressList } from '@gatehouse/shared';
import { parseEgressEntry } from './egress-entry';
import { globProblem } from './glob-syntax';
import { imageProblem } from './image-ref';
import { McpServers } from './mcp-schema';
import { ConfigRecovery } from './recovery-schema';

/**
 * The project config file (docs/config.md). Strict at every level: a misspelt key is an error
 * that names it, not a setting silently left out. Every field says what it expected, so the
 * message can be `limits.memoryMb: expected a positive whole number, got "1g"`.
 */
const checked = (problemOf: (s: string) => string | undefined, what: string) =>
  z.string({ error: `expected ${what}` }).superRefine((s, ctx) => {
    const problem = problemOf(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, input: s });
  });

/** Lists stay absent when not written: a repository's config that leaves one out does not narrow it. */
const list = <T extends z.ZodType>(item: T) => z.array(item, { error: 'expected a list ([...])' }).optional();

const EgressEntryText = checked((s) => {
  const r = parseEgressEntry(s);
  if (!r.ok) return r.problem;
  // The proxy's own grammar decides in the end: an entry it would refuse is refused here, before anything starts.
  const proxy = parseEgressList([s]);
  return 'errors' in proxy ? proxy.errors.join('; ').replace(/^entry 1:?\s*/, '') : undefined;
}, 'a host entry such as registry.npmjs.org or *.example.com:443');

const Glob = checked(globProblem, 'a glob such as dist/**');

const Command = z.string({ error: 'expected a command line (a string)' }).trim().min(1, {
  error: 'a command line cannot be empty',
});

const positiveWhole = () =>
  z
    .number({ error: 'expected a positive whole number' })
    .int({ error: 'expected a positive whole number' })
    .positive({ error: 'expected a positive whole number' });

const section = <T extends z.ZodRawShape>(shape: T) =>
  z.strictObject(shape, { error: 'expected an object ({...})' }).optional();

export const Limits = z.strictObject(
  {
    memoryMb: positiveWhole().optional(),
    cpus: z
      .number({ error: 'expected a positive number of CPUs (fractions allowed)' })
      .positive({ error: 'expected a positive number of CPUs (fractions allowed)' })
      .optional(),
    pids: positiveWhole().optional(),
    diskMb: positiveWhole().optional(),
  },
  { error: 'expected an object ({...})' },
);
export type Limits = z.infer<typeof Limits>;

const positiveNumber = (what: string) =>
  z
    .number({ error: `expected ${what}` })
    .positive({ error: `expected ${what}` })
    .refine(Number.isFinite, { error: `expected ${what}` });

export const ConfigBudgets = z.strictObject(
  Object.fromEntries(
    BUDGET_KEY_NAMES.map((k) => [
      k,
      (BUDGET_KEYS[k].whole
        ? positiveWhole()
        : positiveNumber('a positive number of US dollars, such as 2.5')
      ).optional(),
    ]),
  ) as Record<BudgetKey, z.ZodOptional<z.ZodNumber>>,
  { error: 'expected an object ({...})' },
);

const dollars = () =>
  z
    .number({ error: 'expected US dollars per million tokens (a number, 0 or more)' })
    .nonnegative({ error: 'expected US dollars per million tokens (a number, 0 or more)' })
    .refine(Number.isFinite, { error: 'expected US dollars per million tokens (a number, 0 or more)' });

/** A model's price in US dollars per million tokens (usage/model-price.ts). */
export const ConfigPrice = z.strictObject(
  { input: dollars(), output: dollars(), cachedInput: dollars().optional(), cacheWrite: dollars().optional() },
  { error: 'expected a price ({"input": 2, "cachedInput": 0.5, "output": 8}, US dollars per million tokens)' },
);

/** Prices by `provider:model` (as --model spells it) or `provider:*`. */
export const ConfigPrices = z.record(
  z.string().regex(/^[a-z]+:.+$/i, { error: 'a price is keyed by provider:model (openai:gpt-4.1) or provider:*' }),
  ConfigPrice,
  { error: 'expected an object of prices by model ({"openai:gpt-4.1": {...}})' },
);

export const ProjectConfigFile = z.strictObject(
  {
    $schema: z.string().optional(),
    image: checked(imageProblem, 'preset:node, preset:python or an image reference').optional(),
    setup: list(Command),
    check: Command.optional(),
    egress: section({ setup: list(EgressEntryText), agent: list(EgressEntryText), deny: list(EgressEntryText) }),
    copy: section({ exclude: list(Glob), include: list(Glob) }),
    limits: Limits.optional(),
    budgets: ConfigBudgets.optional(),
    /** Model prices over the built-in table: the trusted config's only (narrow.ts ignores a repository's). */
    prices: ConfigPrices.optional(),
    /** Plan mode's recovery recipes by failure class (recovery-schema.ts); a repository's can only narrow them. */
    recovery: ConfigRecovery.optional(),
    /** MCP servers by name (mcp-schema.ts, docs/mcp.md); the trusted config's only (narrow.ts). */
    mcp: McpServers.optional(),
    /** A policy object (the policy file's schema, checked by the loader) or the path of a policy file. */
    policy: z
      .union([z.string().min(1), z.record(z.string(), z.unknown())], {
        error: 'expected a policy object ({"deny": [...], ...}) or the path of a policy file',
      })
      .optional(),
  },
  { error: 'expected a JSON object ({...}) at the top of the file' },
);
export type ProjectConfigFile = z.infer<typeof ProjectConfigFile>;
