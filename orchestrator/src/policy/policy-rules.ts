import { jsonPath, problemsFromIssues, type FileProblem } from '../problems/file-problems';
import { PolicyFile, type PolicyRule, type RuleEntry } from './policy-schema';
import { parseRule, RuleSyntaxError, type ParseRuleOptions } from './rules';

/** A policy's JSON read as far as it goes: its settings if its shape is right, each rule that parses, every problem. */
export interface PolicyRules {
  file: PolicyFile | undefined;
  /** Each rule that parsed, with the entry it came from (for its examples). */
  rules: Array<{ rule: PolicyRule; entry: RuleEntry }>;
  problems: FileProblem[];
}

/**
 * Everything wrong with a policy's JSON that needs no shell classifier, all at once: its shape
 * (zod's issues, each at its JSON path, an unknown key with the closest known one) and each rule's
 * syntax and tool. Rules are read from the raw JSON, so a bad `mode` does not hide a bad rule.
 * `prefix` places the paths inside a bigger file (the project config's `policy`).
 */
export function policyRules(
  json: unknown,
  file: string,
  opts: ParseRuleOptions & { prefix?: readonly PropertyKey[] } = {},
): PolicyRules {
  const prefix = opts.prefix ?? [];
  const parsed = PolicyFile.safeParse(json);
  const problems = parsed.success ? [] : problemsFromIssues(parsed.error.issues, json, PolicyFile, file, prefix);
  const rules: PolicyRules['rules'] = [];
  const lists = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
  for (const list of ['deny', 'ask', 'allow'] as const) {
    const entries = lists[list];
    if (!Array.isArray(entries)) continue;
    entries.forEach((entry: unknown, index) => {
      const ruleText = typeof entry === 'string' ? entry : (entry as { rule?: unknown } | null)?.rule;
      // An empty or missing rule is the schema's to report.
      if (typeof ruleText !== 'string' || ruleText === '') return;
      const where = `${list}[${index}]`;
      try {
        const rule = parseRule(ruleText, opts);
        const reason = typeof entry === 'string' ? undefined : (entry as { reason?: unknown }).reason;
        rules.push({
          rule: {
            ...rule,
            list,
            index,
            reason: typeof reason === 'string' ? reason : undefined,
            id: `${where} ${ruleText}`,
          },
          entry: entry as RuleEntry,
        });
      } catch (e) {
        if (!(e instanceof RuleSyntaxError)) throw e;
        problems.push({ file, path: jsonPath([...prefix, list, index]), message: e.message });
      }
    });
  }
  return { file: parsed.success ? parsed.data : undefined, rules, problems };
}
