import { isMcpName } from './mcp-names';

/** What a rule's pattern is matched against: a command's text, a workspace path, or nothing (no pattern). */
export type SubjectKind = 'command' | 'path' | 'none';

/**
 * Every tool a policy rule can name, and what a rule's pattern for it is matched against: the
 * command text for bash, the normalised workspace path for path tools, nothing for the rest. The
 * policy knows the tools by name only: tools/ imports policy/, never the other way. The registry
 * (tools/builtin) must register exactly these; orchestrator/test/policy/tool-names.test.ts holds
 * the two lists to one, so a new tool that is not added here fails the tests instead of making
 * every rule naming it a "no such tool".
 */
export const TOOL_SUBJECTS = {
  read_file: 'path',
  write_file: 'path',
  edit_file: 'path',
  list_files: 'path',
  glob: 'path',
  grep: 'path',
  git_diff: 'path',
  bash: 'command',
  git_status: 'none',
  read_artifact: 'none',
  delegate: 'none',
  remember: 'none',
  submit_plan: 'none',
  complete_task: 'none',
} as const satisfies Record<string, SubjectKind>;

/**
 * Plan mode's own tools (`gatehouse plan`, docs/policy.md "Plan mode"): a rule can name them
 * (`allow: ["submit_plan"]` approves plans by rule), without a pattern. They are decided by name
 * (plan-tools.ts), not by the side effect their definition declares.
 */
export const PLAN_TOOL_SUBJECTS = {
  submit_plan: 'none',
  complete_task: 'none',
} as const satisfies Record<string, SubjectKind>;

const RULE_TOOL_SUBJECTS = { ...TOOL_SUBJECTS, ...PLAN_TOOL_SUBJECTS } as const;

export type ToolName = keyof typeof RULE_TOOL_SUBJECTS;

/** The coding tools (codingTools() registers exactly these). */
export const TOOL_NAMES: readonly (keyof typeof TOOL_SUBJECTS)[] = Object.keys(
  TOOL_SUBJECTS,
) as (keyof typeof TOOL_SUBJECTS)[];

/** Every name a rule may use: the coding tools and plan mode's. */
export const RULE_TOOL_NAMES: readonly ToolName[] = Object.keys(RULE_TOOL_SUBJECTS) as ToolName[];

export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(RULE_TOOL_SUBJECTS, name);
}

/**
 * What a rule's pattern for `tool` is matched against (a name that is no tool takes none). An MCP
 * tool's or server's rule (`mcp__fs__write_file(src/**)`, mcp-names.ts) matches the paths its calls name.
 */
export function subjectOf(tool: string): SubjectKind {
  if (isToolName(tool)) return RULE_TOOL_SUBJECTS[tool];
  return isMcpName(tool) ? 'path' : 'none';
}
