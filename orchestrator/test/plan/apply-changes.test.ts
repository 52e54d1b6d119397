import { describe, expect, it } from 'vitest';
import { applyPlanChanges } from '../../src/plan/apply-changes';
import type { PlanChanges, PlanTask } from '../../src/plan/plan-types';

const t = (id: string, title: string, dependsOn: string[] = []): PlanTask => ({ id, title, dependsOn });
// t1 ← t2 ← t3; t4 independent
const plan = [
  t('t1', 'Find the unused imports in src/'),
  t('t2', 'Remove unused imports from src/a.ts', ['t1']),
  t('t3', 'Run npm test and confirm it passes', ['t2']),
  t('t4', 'Update the changelog in CHANGELOG.md'),
];
const refused = (changes: unknown): string => {
  const r = applyPlanChanges(plan, changes as PlanChanges);
  if (r.ok) throw new Error('expected the changes to be refused');
  return r.problem;
};

describe('applyPlanChanges', () => {
  it('no changes: the plan as it was', () => {
    expect(applyPlanChanges(plan, {})).toEqual({ ok: true, tasks: plan, skipped: [] });
  });

  it('skips a task nothing depends on', () => {
    const r = applyPlanChanges(plan, { skip: ['t4'] });
    expect(r).toEqual({ ok: true, tasks: plan.slice(0, 3), skipped: ['t4'] });
  });

  it('skips a task together with the tasks that depend on it', () => {
    const r = applyPlanChanges(plan, { skip: ['t3', 't2'] });
    expect(r).toEqual({ ok: true, tasks: [plan[0], plan[3]], skipped: ['t2', 't3'] });
  });

  it('refuses to skip a task others depend on, naming both', () => {
    expect(refused({ skip: ['t2'] })).toBe('t3 depends on t2, which would be skipped: skip t3 too, or keep t2');
  });

  it('refuses to skip every task', () => {
    expect(refused({ skip: ['t1', 't2', 't3', 't4'] })).toMatch(/every task would be skipped/);
  });

  it('refuses an unknown id in skip, order and edit, listing the plan', () => {
    const msg = 'there is no task "t9" in the plan (its tasks: t1, t2, t3, t4)';
    expect(refused({ skip: ['t9'] })).toBe(msg);
    expect(refused({ order: ['t1', 't2', 't3', 't9'] })).toBe(msg);
    expect(refused({ edit: { t9: 'Remove unused imports from src/b.ts' } })).toBe(msg);
  });

  it('reorders, keeping dependencies', () => {
    const r = applyPlanChanges(plan, { order: ['t4', 't1', 't2', 't3'] });
    expect(r.ok && r.tasks.map((x) => x.id)).toEqual(['t4', 't1', 't2', 't3']);
  });

  it('refuses a reorder that breaks a dependency, naming it', () => {
    expect(refused({ order: ['t1', 't3', 't2', 't4'] })).toBe('t3 depends on t2, which the new order puts after it');
  });

  it('refuses an order that is not a permutation of the remaining tasks', () => {
    expect(refused({ order: ['t1', 't2', 't3'] })).toMatch(/leaves out t4/);
    expect(refused({ order: ['t1', 't1', 't2', 't3', 't4'] })).toMatch(/lists t1 twice/);
    expect(refused({ skip: ['t4'], order: ['t1', 't2', 't3', 't4'] })).toMatch(/lists t4, which is skipped/);
  });

  it('skip and order together: the order covers what remains', () => {
    const r = applyPlanChanges(plan, { skip: ['t4'], order: ['t1', 't2', 't3'] });
    expect(r).toEqual({ ok: true, tasks: plan.slice(0, 3), skipped: ['t4'] });
  });

  it('edits a title, checked for vagueness', () => {
    const r = applyPlanChanges(plan, { edit: { t4: 'Add a 1.2.0 entry to CHANGELOG.md' } });
    expect(r.ok && r.tasks[3]).toEqual({ ...plan[3], title: 'Add a 1.2.0 entry to CHANGELOG.md' });
    expect(plan[3]!.title).toBe('Update the changelog in CHANGELOG.md');
    expect(refused({ edit: { t4: 'Clean code' } })).toMatch(/^the new title of t4: "Clean code" is vague/);
  });

  it('refuses to edit a skipped task', () => {
    expect(refused({ skip: ['t4'], edit: { t4: 'Add a 1.2.0 entry to CHANGELOG.md' } })).toMatch(
      /t4 is both skipped and edited/,
    );
  });

  it('prototype keys in edit are ids like any other, never properties', () => {
    expect(refused(JSON.parse('{"edit": {"__proto__": "Remove the file src/a.ts"}}'))).toBe(
      'there is no task "__proto__" in the plan (its tasks: t1, t2, t3, t4)',
    );
    expect(refused({ edit: { constructor: 'Remove the file src/a.ts' } })).toMatch(/no task "constructor"/);
    expect(refused({ edit: { toString: 'Remove the file src/a.ts' } })).toMatch(/no task "toString"/);
  });

  it('refuses malformed changes with what is wrong', () => {
    expect(refused({ skip: 't1' })).toMatch(/^skip: /);
    expect(refused({ drop: ['t1'] })).toMatch(/changes are skip, order and edit/);
    expect(refused({ skip: Array.from({ length: 10_000 }, (_, i) => `t${i}`) })).toMatch(/^skip: /);
    expect(refused({ edit: { t4: '' } })).toMatch(/^edit\.t4: /);
  });

  it('unicode titles in edits', () => {
    const r = applyPlanChanges(plan, { edit: { t4: '在 CHANGELOG.md 中添加 1.2.0 版本说明' } });
    expect(r.ok).toBe(true);
  });
});
