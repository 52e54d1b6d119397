import { z } from 'zod';
import { FIXED_ESCALATION, RECOVERY_LIMITS } from '../plan/recovery-recipes';

/**
 * The config's `recovery` (plan mode's recovery recipes, docs/config.md): per failure class, how
 * many retries, the waits between them, and what happens when they are used up. Retries are
 * always finite (0-10). A permission or unknown failure always goes to a person: a config that
 * sets their action to anything else is refused, not quietly overridden.
 */
const retries = z
  .number({ error: `expected a whole number of retries from 0 to ${RECOVERY_LIMITS.maxRetries}` })
  .int({ error: `expected a whole number of retries from 0 to ${RECOVERY_LIMITS.maxRetries}` })
  .min(0, { error: `expected a whole number of retries from 0 to ${RECOVERY_LIMITS.maxRetries}` })
  .max(RECOVERY_LIMITS.maxRetries, {
    error:
      `at most ${RECOVERY_LIMITS.maxRetries} retries: retries are finite, ` +
      'and a failure that persists goes to a person',
  });

const waitMs = z
  .number({ error: `expected a wait in milliseconds, a whole number from 0 to ${RECOVERY_LIMITS.maxWaitMs}` })
  .int({ error: `expected a wait in milliseconds, a whole number from 0 to ${RECOVERY_LIMITS.maxWaitMs}` })
  .min(0, { error: `expected a wait in milliseconds, a whole number from 0 to ${RECOVERY_LIMITS.maxWaitMs}` })
  .max(RECOVERY_LIMITS.maxWaitMs, { error: `a wait is at most ${RECOVERY_LIMITS.maxWaitMs} ms (10 minutes)` });

const backoffMs = z
  .array(waitMs, { error: 'expected a list of waits in milliseconds, such as [5000, 30000]' })
  .max(RECOVERY_LIMITS.maxWaits, { error: `at most ${RECOVERY_LIMITS.maxWaits} waits (the last one repeats)` });

const exhausted = z.enum(['escalate', 'fail'], {
  error: 'expected "escalate" (ask a person: retry, skip or abort) or "fail" (fail the task and stop the plan)',
});

const action = z.enum(['retry', 'feedback', 'escalate'], {
  error: 'expected "retry" (run the call again), "feedback" (tell the model) or "escalate" (ask a person)',
});

const fixedAction = z.literal('escalate', {
  error:
    'this class always goes to a person ("escalate"): a denial or an unrecognised failure is never retried on ' +
    'its own; leave "action" out',
});

const entry = (fixed: boolean) =>
  z
    .strictObject(
      {
        action: (fixed ? fixedAction : action).optional(),
        retries: retries.optional(),
        backoffMs: backoffMs.optional(),
        exhausted: exhausted.optional(),
      },
      { error: 'expected an object ({"retries": 2, "backoffMs": [5000, 30000], "exhausted": "escalate"})' },
    )
    .optional();

export const ConfigRecovery = z.strictObject(
  {
    transient: entry(FIXED_ESCALATION.includes('transient')),
    permission: entry(FIXED_ESCALATION.includes('permission')),
    invalid_input: entry(FIXED_ESCALATION.includes('invalid_input')),
    logic: entry(FIXED_ESCALATION.includes('logic')),
    unrecoverable: entry(FIXED_ESCALATION.includes('unrecoverable')),
    unknown: entry(FIXED_ESCALATION.includes('unknown')),
  },
  { error: 'expected an object of recipes by failure class ({"transient": {...}, "logic": {...}})' },
);
export type ConfigRecovery = z.infer<typeof ConfigRecovery>;
