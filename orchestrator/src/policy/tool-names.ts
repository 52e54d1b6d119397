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
  submit_plan: 'none',
  complete_task: 'none',
} as const satisfies Record<string, SubjectKind>;

export type ToolName = keyof typeof TOOL_SUBJECTS;

export const TOOL_NAMES: readonly ToolName[] = Object.keys(TOOL_SUBJECTS) as ToolName[];

export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(TOOL_SUBJECTS, name);
}
