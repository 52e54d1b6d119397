import { describe, expect, it } from 'vitest';
import { repositoryPolicy } from '../../src/policy/repository-policy';
import {
  compilePolicy,
  createPolicy,
  loadShellClassifier,
  Mode,
  parseRule,
  type PolicyRequest,
} from '../../src/policy/index';

const classifier = await loadShellClassifier();
const policy = (file: unknown, mode: Mode) =>
  createPolicy(compilePolicy(file, 'test.json', classifier), mode, classifier);
const plan: PolicyRequest = {
  tool: 'submit_plan',
  input: { tasks: [{ id: 't1', title: 'Remove unused imports from src/a.ts' }] },
  // Whatever the tool declares: a plan is decided by name, never allowed as a "read".
  readOnly: true,
  sideEffect: 'read',
};
const complete: PolicyRequest = {
  tool: 'complete_task',
  input: { taskId: 't1', summary: 'done (obs-3)' },
  readOnly: true,
  sideEffect: 'read',
};

describe('plan tools in the policy', () => {
  it.each(Mode.options)('submit_plan is asked in %s mode when no rule names it', (mode) => {
    const d = policy({}, mode).decide(plan);
    expect(d).toMatchObject({ decision: 'ask', policyId: 'gatehouse:plan-gate' });
    expect(d.reason).toContain('a plan is approved by a person or by a policy rule for submit_plan');
  });

  it('as a write or a command it is still asked, even in sandboxed-auto', () => {
    const d = policy({}, 'sandboxed-auto').decide({ ...plan, readOnly: false, sideEffect: 'write' });
    expect(d.decision).toBe('ask');
  });

  it('an earlier approval of the same shape does not approve the next plan', () => {
    const p = policy({}, 'confirm-novel');
    const shape = p.decide(plan).shape;
    expect(p.decide(plan, { approvedShapes: new Set([shape]) }).decision).toBe('ask');
  });

  it.each(Mode.options)('an allow rule approves plans by rule in %s mode', (mode) => {
    const d = policy({ allow: [{ rule: 'submit_plan', reason: 'CI approves plans' }] }, mode).decide(plan);
    expect(d).toMatchObject({ decision: 'allow', policyId: 'allow[0] submit_plan', reason: 'CI approves plans' });
  });

  it('a deny rule refuses plans; deny beats allow', () => {
    const d = policy({ allow: ['submit_plan'], deny: ['submit_plan'] }, 'sandboxed-auto').decide(plan);
    expect(d).toMatchObject({ decision: 'deny', policyId: 'deny[0] submit_plan' });
  });

  it.each(Mode.options)('complete_task is allowed in %s mode', (mode) => {
    expect(policy({}, mode).decide(complete)).toMatchObject({ decision: 'allow', policyId: 'gatehouse:complete-task' });
  });

  it('an ask rule for complete_task asks', () => {
    expect(policy({ ask: ['complete_task'] }, 'sandboxed-auto').decide(complete).decision).toBe('ask');
  });

  it('submit_plan and complete_task are rule names; they take no pattern; a typo is named', () => {
    expect(parseRule('submit_plan').tool).toBe('submit_plan');
    expect(parseRule('complete_task').tool).toBe('complete_task');
    expect(() => parseRule('submit_plan(read_file)')).toThrow(/submit_plan takes no pattern/);
    expect(() => parseRule('submit_plans')).toThrow(/did you mean submit_plan\?/);
  });

  it("a repository's policy cannot allow plans: only its deny and ask rules are taken", () => {
    const full = compilePolicy({ allow: ['submit_plan'] }, 'repo.json', classifier);
    const { loaded, ignored } = repositoryPolicy([{ full, label: '' }], classifier);
    expect(ignored).toEqual(['1 allow rule(s)']);
    expect(createPolicy(loaded, 'sandboxed-auto', classifier).decide(plan).decision).toBe('ask');
  });

  it('other tools are unaffected', () => {
    const read: PolicyRequest = { tool: 'read_file', input: { path: 'a' }, readOnly: true, sideEffect: 'read' };
    expect(policy({}, 'confirm-each').decide(read).decision).toBe('allow');
  });
});
