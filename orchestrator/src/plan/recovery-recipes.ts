import type { FailureClass, RecoveryRecipe, RecoveryRecipes } from './plan-types';

/** What a config may set for one class (docs/config.md, `recovery`); the rest comes from the defaults. */
export interface RecoveryClassConfig {
  /** Not for permission and unknown: those always go to a person (the config schema refuses it). */
  action?: RecoveryRecipe['action'];
  retries?: number;
  backoffMs?: number[];
  exhausted?: RecoveryRecipe['exhausted'];
}

export type RecoveryConfig = Partial<Record<FailureClass, RecoveryClassConfig>>;

/** The config's bounds: retries are always finite, a wait is at most ten minutes. */
export const RECOVERY_LIMITS = { maxRetries: 10, maxWaitMs: 600_000, maxWaits: 10 } as const;

/** Classes whose action a config cannot change: a denial or a failure nobody recognises is a person's call. */
export const FIXED_ESCALATION: readonly FailureClass[] = ['permission', 'unknown'];

const recipe = (
  cls: FailureClass,
  action: RecoveryRecipe['action'],
  retries: number,
  backoffMs: number[] = [],
): RecoveryRecipe => ({ name: `${action}_${cls}`, action, retries, backoffMs, exhausted: 'escalate' });

/**
 * The spec's recipes: a transient failure is retried twice with backoff; a permission failure stops
 * and asks a person (never for credentials); invalid input and logic errors are fed back to the
 * model once; a lost sandbox and anything unrecognised go to a person at once.
 */
export const DEFAULT_RECOVERY: Readonly<RecoveryRecipes> = Object.freeze({
  transient: recipe('transient', 'retry', 2, [5000, 30000]),
  permission: recipe('permission', 'escalate', 0),
  invalid_input: recipe('invalid_input', 'feedback', 1),
  logic: recipe('logic', 'feedback', 1),
  unrecoverable: recipe('unrecoverable', 'escalate', 0),
  unknown: recipe('unknown', 'escalate', 0),
});

/**
 * The recipes a run uses: the defaults with what the (resolved, already validated) config set over
 * them. The config schema enforces the bounds; they are enforced here again so a recipe handed in
 * any other way still has finite retries and escalates what must be escalated.
 */
export function recoveryRecipes(config: RecoveryConfig = {}): RecoveryRecipes {
  const out = {} as RecoveryRecipes;
  for (const cls of Object.keys(DEFAULT_RECOVERY) as FailureClass[]) {
    const base = DEFAULT_RECOVERY[cls];
    const c = Object.hasOwn(config, cls) ? (config[cls] ?? {}) : {};
    const action = FIXED_ESCALATION.includes(cls) ? 'escalate' : (c.action ?? base.action);
    const retries = clamp(c.retries ?? base.retries, RECOVERY_LIMITS.maxRetries);
    const backoffMs = (c.backoffMs ?? base.backoffMs)
      .slice(0, RECOVERY_LIMITS.maxWaits)
      .map((ms) => clamp(ms, RECOVERY_LIMITS.maxWaitMs));
    out[cls] = { name: `${action}_${cls}`, action, retries, backoffMs, exhausted: c.exhausted ?? base.exhausted };
  }
  return out;
}

/** The wait before retry `attempt` (1-based): the last value repeats; none configured is no wait. */
export function backoffFor(recipe: RecoveryRecipe, attempt: number): number {
  if (recipe.backoffMs.length === 0) return 0;
  return recipe.backoffMs[Math.min(Math.max(attempt, 1), recipe.backoffMs.length) - 1] as number;
}

function clamp(n: number, max: number): number {
  return Number.isFinite(n) ? Math.min(Math.max(Math.trunc(n), 0), max) : 0;
}
