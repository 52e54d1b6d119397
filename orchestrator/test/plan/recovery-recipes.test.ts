import { describe, expect, it } from 'vitest';
import { backoffFor, DEFAULT_RECOVERY, recoveryRecipes, type RecoveryConfig } from '../../src/plan/recovery-recipes';

describe('recoveryRecipes', () => {
  it("the spec's defaults", () => {
    expect(recoveryRecipes()).toEqual({
      transient: {
        name: 'retry_transient',
        action: 'retry',
        retries: 2,
        backoffMs: [5000, 30000],
        exhausted: 'escalate',
      },
      permission: { name: 'escalate_permission', action: 'escalate', retries: 0, backoffMs: [], exhausted: 'escalate' },
      invalid_input: {
        name: 'feedback_invalid_input',
        action: 'feedback',
        retries: 1,
        backoffMs: [],
        exhausted: 'escalate',
      },
      logic: { name: 'feedback_logic', action: 'feedback', retries: 1, backoffMs: [], exhausted: 'escalate' },
      unrecoverable: {
        name: 'escalate_unrecoverable',
        action: 'escalate',
        retries: 0,
        backoffMs: [],
        exhausted: 'escalate',
      },
      unknown: { name: 'escalate_unknown', action: 'escalate', retries: 0, backoffMs: [], exhausted: 'escalate' },
    });
    expect(recoveryRecipes()).toEqual(DEFAULT_RECOVERY);
  });

  it('the config overrides per class; the name follows the action', () => {
    const r = recoveryRecipes({
      transient: { retries: 5, backoffMs: [1000] },
      logic: { action: 'escalate', exhausted: 'fail' },
    });
    expect(r.transient).toMatchObject({ name: 'retry_transient', retries: 5, backoffMs: [1000] });
    expect(r.logic).toEqual({
      name: 'escalate_logic',
      action: 'escalate',
      retries: 1,
      backoffMs: [],
      exhausted: 'fail',
    });
    expect(r.permission).toEqual(DEFAULT_RECOVERY.permission);
  });

  it('permission and unknown always escalate, and retries are finite, whatever is handed in', () => {
    const bad = {
      permission: { action: 'retry', retries: Infinity },
      unknown: { action: 'feedback', retries: 1e9, backoffMs: [-5, NaN, 1e12] },
    } as unknown as RecoveryConfig;
    const r = recoveryRecipes(bad);
    expect(r.permission).toMatchObject({ action: 'escalate', retries: 0 });
    expect(r.unknown).toMatchObject({ action: 'escalate', retries: 10, backoffMs: [0, 0, 600_000] });
  });

  it('ignores prototype keys in the config', () => {
    const r = recoveryRecipes(
      JSON.parse('{"__proto__": {"retries": 9}, "constructor": {"retries": 9}}') as RecoveryConfig,
    );
    expect(r).toEqual(DEFAULT_RECOVERY);
  });

  it('does not share arrays with the defaults', () => {
    recoveryRecipes().transient.backoffMs.push(1);
    expect(DEFAULT_RECOVERY.transient.backoffMs).toEqual([5000, 30000]);
  });

  it('backoff: the last wait repeats', () => {
    const r = DEFAULT_RECOVERY.transient;
    expect([1, 2, 3].map((a) => backoffFor(r, a))).toEqual([5000, 30000, 30000]);
    expect(backoffFor(DEFAULT_RECOVERY.logic, 1)).toBe(0);
  });
});
