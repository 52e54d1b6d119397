import { readFileSync } from 'node:fs';
import { MAX_SETTINGS_FILE_BYTES, PlainFileError, readPlainFile } from '../files/read-plain-file';
import path from 'node:path';
import { canonicalJson, sha256Hex } from '@gatehouse/shared';
import { problemText, type FileProblem } from '../problems/file-problems';
import { parseJsonText } from '../problems/json-text';
import { GatehouseError } from '../errors';
import { policyRules } from './policy-rules';
import type { PolicyFile, PolicyRule } from './policy-schema';
import { ruleExampleProblems } from './rule-examples';
import type { ShellClassifier } from './shell/types';

export { PolicyFile, type PolicyRule, type RuleList } from './policy-schema';

export interface LoadedPolicy {
  /** Where it came from: a file path, or `built-in` for the empty default. */
  source: string;
  sha256: string;
  file: PolicyFile;
  rules: PolicyRule[];
}

/**
 * The policy file cannot be read or is not valid: a usage error, nothing runs under it. Every
 * problem found is in it at once, each with its file and JSON path (`allow[0]`), so one edit fixes
 * them all.
 */
export class PolicyFileError extends GatehouseError {
  readonly kind = 'usage';
  readonly problems: readonly FileProblem[];

  constructor(problems: readonly FileProblem[] | string, source?: string) {
    const list = typeof problems === 'string' ? [] : problems;
    super(
      typeof problems === 'string'
        ? problems
        : `policy ${source ?? list[0]?.file ?? ''} is not valid ` +
            `(${list.length} problem${list.length === 1 ? '' : 's'}):\n` +
            `${list.map((p) => `  ${problemText(p)}`).join('\n')}\n` +
            'Fix them (docs/policy.md: the rule forms and the name of every tool).',
    );
    this.problems = list;
  }
}

export interface CompileOptions {
  /**
   * A policy a run recorded (resume): compiled as it was accepted then, so a rule naming a tool
   * the registry has since dropped matches nothing instead of refusing the run.
   */
  recorded?: boolean;
  /** The MCP servers the run's config declares: a rule naming another is refused (rules.ts). */
  mcpServers?: readonly string[];
  /**
   * The file may be hostile (a repository's, or named by one): read only if it is a small regular
   * file, its last component no symbolic link (read-plain-file.ts).
   */
  untrusted?: boolean;
}

/** Reads, validates and checks a policy file: every problem in it at once, each naming its entry. */
export function loadPolicyFile(file: string, classifier: ShellClassifier, opts: CompileOptions = {}): LoadedPolicy {
  const full = path.resolve(file);
  let text: string;
  try {
    text = opts.untrusted ? readPlainFile(full, MAX_SETTINGS_FILE_BYTES).toString('utf8') : readFileSync(full, 'utf8');
  } catch (e) {
    if (e instanceof PlainFileError) throw new PolicyFileError(`cannot read policy file ${full}: it ${e.why}`);
    throw new PolicyFileError(
      `cannot read policy file ${full}: ` +
        `${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
  }
  const json = parseJsonText(text.replace(/^\uFEFF/, ''));
  if (!json.ok)
    throw new PolicyFileError([
      { file: full, path: '', line: json.line, column: json.column, message: `not valid JSON: ${json.message}` },
    ]);
  // JSON.parse keeps the last of a key given twice: `"allow"` twice would silently drop the first list.
  const duplicates: FileProblem[] = json.duplicates.map((d) => ({
    file: full,
    path: d.path,
    line: d.line,
    column: d.column,
    message: 'this key is given twice',
  }));
  return compileChecked(json.value, full, classifier, opts, duplicates);
}

export function compilePolicy(
  json: unknown,
  source: string,
  classifier: ShellClassifier,
  opts: CompileOptions = {},
): LoadedPolicy {
  return compileChecked(json, source, classifier, opts, []);
}

function compileChecked(
  json: unknown,
  source: string,
  classifier: ShellClassifier,
  opts: CompileOptions,
  earlier: readonly FileProblem[],
): LoadedPolicy {
  const read = policyRules(json, source, {
    ...(opts.recorded ? { unknownTools: 'keep' as const } : {}),
    ...(opts.mcpServers ? { mcpServers: opts.mcpServers } : {}),
  });
  const problems = [...earlier, ...read.problems];
  for (const { rule, entry } of read.rules) problems.push(...ruleExampleProblems(rule, entry, classifier, source));
  if (problems.length > 0 || !read.file) throw new PolicyFileError(problems, source);
  const file = read.file;
  return { source, sha256: sha256Hex(canonicalJson(file)), file, rules: read.rules.map((r) => r.rule) };
}

/** The policy of a run without a policy file: no rules, the mode decides. */
export function emptyPolicy(classifier: ShellClassifier): LoadedPolicy {
  return compilePolicy({}, 'built-in', classifier);
}
