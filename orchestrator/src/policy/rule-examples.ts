import { jsonPath, type FileProblem } from '../problems/file-problems';
import type { PolicyRule, RuleEntry } from './policy-schema';
import { pathSubject, subjectKind } from './rules';
import type { ShellClassifier } from './shell/types';

/**
 * A rule's `match` / `notMatch` examples, each that fails as a problem at its JSON path. A bash
 * example is a command line, matched the way decisions match (a deny or ask rule catches a line if
 * any of its commands matches; an allow rule covers a line only if all of them do), so the examples
 * prove what the rule will actually decide.
 */
export function ruleExampleProblems(
  rule: PolicyRule,
  entry: RuleEntry,
  classifier: ShellClassifier,
  file: string,
  prefix: readonly PropertyKey[] = [],
): FileProblem[] {
  if (typeof entry === 'string') return [];
  const at = (...rest: PropertyKey[]): string => jsonPath([...prefix, rule.list, rule.index, ...rest]);
  const problems: FileProblem[] = [];
  for (const key of ['match', 'notMatch'] as const) {
    const examples = entry[key] ?? [];
    if (examples.length > 0 && rule.test === undefined) {
      problems.push({
        file,
        path: at(key),
        message: `"${rule.text}": examples need a pattern to test (this rule covers every call of ${rule.tool})`,
      });
      continue;
    }
    examples.forEach((example, i) => {
      const expected = key === 'match';
      const got = ruleMatchesExample(rule, example, classifier);
      if (got !== expected)
        problems.push({
          file,
          path: at(key, i),
          message:
            `"${rule.text}": example ${JSON.stringify(example)} is expected ` +
            `${expected ? 'to match' : 'not to match'}, but it ${got ? 'matches' : 'does not'}`,
        });
    });
  }
  return problems;
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
