import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { canonicalJson, sha256Hex } from '@gatehouse/shared';
import { Approver } from '../approval/channels/approverKeys';
import { Mode } from './mode';
import { parseRule, pathSubject, RuleSyntaxError, subjectKind, type Rule } from './rules';
import type { ShellClassifier } from './shell/types';
import { GatehouseError } from '../errors';

/**
 * The policy file: `{"mode", "allow", "ask", "deny", "approvers"}`. A rule is a string or an
 * object with a reason and inline examples; examples are checked when the file loads, so a rule
 * that does not do what its author meant fails at load, not in production.
 */
const RuleEntry = z.union([
  z.string().min(1),
  z.strictObject({
    rule: z.string().min(1),
    reason: z.string().optional(),
    /** Commands (bash rules) or paths (path rules) the rule must match. */
    match: z.array(z.string()).optional(),
    /** … and must not match. */
    notMatch: z.array(z.string()).optional(),
  }),
]);
type RuleEntry = z.infer<typeof RuleEntry>;

export const PolicyFile = z.strictObject({
  $schema: z.string().optional(),
  mode: Mode.optional(),
  allow: z.array(RuleEntry).default([]),
  ask: z.array(RuleEntry).default([]),
  deny: z.array(RuleEntry).default([]),
  /** Who may answer approvals over NATS: user nkey public keys (checked as the NATS channel will). */
  approvers: z
    .array(Approver)
    .default([])
    .refine(
      (list) =>
        new Set(list.map((a) => a.publicKey)).size === list.length &&
        new Set(list.map((a) => a.name)).size === list.length,
      'each approver name and key may be listed once',
    ),
});
export type PolicyFile = z.infer<typeof PolicyFile>;

export type RuleList = 'deny' | 'ask' | 'allow';

export interface PolicyRule extends Rule {
  list: RuleList;
  index: number;
  reason: string | undefined;
  /** `deny[2] bash(git push*)`: where the rule is, for messages and the audit trail. */
  id: string;
}

export interface LoadedPolicy {
  /** Where it came from: a file path, or `built-in` for the empty default. */
  source: string;
  sha256: string;
  file: PolicyFile;
  rules: PolicyRule[];
}

/** The policy file cannot be read or is not valid: a usage error, nothing runs under it. */
export class PolicyFileError extends GatehouseError {
  readonly kind = 'usage';
}

/** Reads, validates and checks a policy file. Every problem is one clear error naming the entry. */
export function loadPolicyFile(file: string, classifier: ShellClassifier): LoadedPolicy {
  const full = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(full, 'utf8');
  } catch (e) {
    throw new PolicyFileError(
      `cannot read policy file ${full}: ` +
        `${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new PolicyFileError(`policy file ${full} is not valid JSON: ${(e as Error).message}`);
  }
  return compilePolicy(json, full, classifier);
}

export function compilePolicy(json: unknown, source: string, classifier: ShellClassifier): LoadedPolicy {
  const parsed = PolicyFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue ? issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('') : '';
    throw new PolicyFileError(
      `policy ${source}: at ${at || '(top level)'}: ` +
        `${issue?.message ?? 'invalid'}${entryText(json, issue?.path ?? [])}`,
    );
  }
  const file = parsed.data;
  const rules: PolicyRule[] = [];
  for (const list of ['deny', 'ask', 'allow'] as const) {
    file[list].forEach((entry, index) => {
      const where = `${list}[${index}]`;
      const ruleText = typeof entry === 'string' ? entry : entry.rule;
      let rule: Rule;
      try {
        rule = parseRule(ruleText);
      } catch (e) {
        if (e instanceof RuleSyntaxError) throw new PolicyFileError(`policy ${source}: ${where}: ${e.message}`);
        throw e;
      }
      const compiled: PolicyRule = {
        ...rule,
        list,
        index,
        reason: typeof entry === 'string' ? undefined : entry.reason,
        id: `${where} ${ruleText}`,
      };
      checkExamples(compiled, entry, classifier, `policy ${source}: ${where} "${ruleText}"`);
      rules.push(compiled);
    });
  }
  return { source, sha256: sha256Hex(canonicalJson(file)), file, rules };
}

/** The policy of a run without a policy file: no rules, the mode decides. */
export function emptyPolicy(classifier: ShellClassifier): LoadedPolicy {
  return compilePolicy({}, 'built-in', classifier);
}

/**
 * `match` / `notMatch` examples: a bash example is a command line, matched the way decisions match
 * (a deny or ask rule catches a line if any of its commands matches; an allow rule covers a line
 * only if all of them do), so the examples prove what the rule will actually decide.
 */
function checkExamples(rule: PolicyRule, entry: RuleEntry, classifier: ShellClassifier, where: string): void {
  if (typeof entry === 'string') return;
  const examples = [
    ...(entry.match ?? []).map((e) => [e, true] as const),
    ...(entry.notMatch ?? []).map((e) => [e, false] as const),
  ];
  if (examples.length > 0 && rule.test === undefined)
    throw new PolicyFileError(
      `${where}: examples need a pattern to test (this rule covers every call of ${rule.tool})`,
    );
  for (const [example, expected] of examples) {
    const got = ruleMatchesExample(rule, example, classifier);
    if (got !== expected) {
      throw new PolicyFileError(
        `${where}: example ${JSON.stringify(example)} is expected ${expected ? 'to match' : 'not to match'}, but it ` +
          `${got ? 'matches' : 'does not'}`,
      );
    }
  }
}

function ruleMatchesExample(rule: PolicyRule, example: string, classifier: ShellClassifier): boolean {
  const test = rule.test as (s: string) => boolean;
  if (subjectKind(rule.tool) === 'path') {
    return test(pathSubject({ path: example }));
  }
  const commands = classifier.classify(example).commands;
  if (commands.length === 0) return false;
  return rule.list === 'allow' ? commands.every((c) => test(c.text)) : commands.some((c) => test(c.text));
}

function entryText(root: unknown, at: readonly PropertyKey[]): string {
  let node: unknown = root;
  for (const p of at.slice(0, 2)) {
    if (typeof node !== 'object' || node === null) return '';
    node = (node as Record<PropertyKey, unknown>)[p];
  }
  if (node === undefined || at.length < 2) return '';
  const text = JSON.stringify(node);
  return ` (entry: ${text.length > 120 ? `${text.slice(0, 120)}…` : text})`;
}
