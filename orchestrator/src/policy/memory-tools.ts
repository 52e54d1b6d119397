import type { Decision } from './approval-policy';
import type { Mode } from './mode';

/**
 * What `remember` gets when no rule names it, in every mode (docs/memory.md): a record outlives the
 * run and enters later runs' contexts, so a person decides, even in sandboxed-auto. An explicit rule
 * decides instead (`"allow": ["remember"]` for a trusted policy, `"deny": ["remember"]`). Decided by
 * name, like plan mode's tools (plan-tools.ts), so no mode's default and no approved shape lets it through.
 */
export function memoryToolDefault(
  tool: string,
  mode: Mode,
): Pick<Decision, 'decision' | 'policyId' | 'reason'> | undefined {
  if (tool !== 'remember') return undefined;
  return {
    decision: 'ask',
    policyId: 'gatehouse:memory-gate',
    reason:
      'a memory record outlives the run: a person or a policy rule for remember decides, in every mode ' +
      `(mode ${mode})`,
  };
}
