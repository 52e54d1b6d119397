import { FAILURE_RULES } from './failure-rules';
import type { Classified, FailureInput } from './plan-types';

/** Evidence is a quote for the log and the person, not the output: at most this many characters. */
export const MAX_EVIDENCE = 200;

/**
 * Every failure gets a class before anything is done about it (the spec: classify before
 * recovering). The rules are data (failure-rules.ts), applied in order; what none of them
 * recognises — an internal error, a status nobody expected — is `unknown`, which a person decides.
 */
export function classifyFailure(f: FailureInput): Classified {
  for (const rule of FAILURE_RULES) {
    const evidence = rule.evidence(f);
    if (evidence !== undefined) return { class: rule.class, evidence: bounded(evidence) };
  }
  return { class: 'unknown', evidence: bounded(unknownEvidence(f)) };
}

function unknownEvidence(f: FailureInput): string {
  if (f.kind === 'summary') return `summary: ${f.reason}`;
  const status = f.status !== undefined ? `status ${f.status}` : 'no status';
  const exit = f.exitCode === undefined || f.exitCode === null ? 'no exit code' : `exit ${f.exitCode}`;
  const what = f.kind === 'call' ? `${f.tool} ${f.outcome}` : `check \`${f.command}\``;
  const text = (f.kind === 'call' ? f.content : f.output).trim();
  return `${what} (${status}, ${exit})${text ? `: ${text}` : ''}`;
}

function bounded(text: string): string {
  const t = text.trim();
  return t.length <= MAX_EVIDENCE ? t : `${t.slice(0, MAX_EVIDENCE - 1)}…`;
}

// The rules' own examples, asserted at load: each must be found by its rule, and no counter-example may be.
for (const rule of FAILURE_RULES) {
  for (const f of rule.examples.match)
    if (rule.evidence(f) === undefined)
      throw new Error(`failure rule ${rule.name}: example ${JSON.stringify(f)} must match, but does not`);
  for (const f of rule.examples.notMatch)
    if (rule.evidence(f) !== undefined)
      throw new Error(`failure rule ${rule.name}: example ${JSON.stringify(f)} must not match, but does`);
}
