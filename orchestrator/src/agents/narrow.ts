import type { ApprovalPolicy } from '../policy/approval-policy';
import { pathPattern, pathSubject, subjectKind } from '../policy/rules';
import { normaliseGlob } from './handoff';

/**
 * A sub-agent's policy: its parent's, unchanged (same rules, same mode, so every deny is
 * inherited and nothing is more permissive), plus one narrowing: path tools may only touch the
 * handed-over paths. A narrowed policy can be narrowed again, never widened.
 */
export function narrowPolicy(parent: ApprovalPolicy, paths: readonly string[]): ApprovalPolicy {
  const matchers = paths.map((p) => pathPattern(normaliseGlob(p)));
  return {
    mode: parent.mode,
    ...(parent.paths ? { paths: parent.paths } : {}),
    decide(req, facts) {
      const inherited = parent.decide(req, facts);
      if (inherited.decision === 'deny' || subjectKind(req.tool) !== 'path') return inherited;
      const p = pathSubject(req.input);
      if (matchers.some((m) => m.test(p))) return inherited;
      // A directory listing that covers the scope (e.g. `.` for `src/**`) is a read: allowed.
      if (req.readOnly && paths.some((g) => normaliseGlob(g).startsWith(p === '.' ? '' : `${p}/`))) return inherited;
      return {
        ...inherited,
        decision: 'deny',
        policyId: 'handoff:paths',
        reason: `${p} is outside this sub-agent's paths (${paths.join(', ')})`,
      };
    },
  };
}
