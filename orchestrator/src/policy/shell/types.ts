/**
 * What the shell classifier tells the policy about one `bash` command line. The policy never looks
 * at the raw string: it decides on these parts, so a `&&`, a pipe, `$()` or `bash -c` cannot hide
 * a command from a rule.
 */

/** Classes, from least to most risky (the order is used to pick a command line's overall class). */
export const COMMAND_CLASSES = [
  'read-only',
  'test-build',
  'write',
  'destructive',
  'network',
  'privilege',
  'unknown',
] as const;
export type CommandClass = (typeof COMMAND_CLASSES)[number];

export interface SimpleCommand {
  /**
   * The words after expansion-free normalisation: the command name is its basename (`/bin/rm` → `rm`), env prefixes and
   * wrappers removed.
   */
  argv: string[];
  /** `argv` joined with single spaces: what `bash(PATTERN)` rules are matched against. */
  text: string;
  class: CommandClass;
  /** Why it got its class, in a few words (shown to approvers). */
  reason: string;
  /** Wrappers it was found inside, outermost first (e.g. ['bash -c', 'xargs']). */
  via: string[];
}

export interface ShellAnalysis {
  /**
   * Every simple command the line would run, including those inside substitutions, subshells, heredoc-fed shells and
   * wrappers.
   */
  commands: SimpleCommand[];
  /** Files that redirections write to (`>`, `>>`, `&>`, `tee` targets count via the tee command itself). */
  writes: string[];
  /** The most risky class among the commands and redirections. */
  class: CommandClass;
  /**
   * False when some part could not be parsed or followed (dynamic command names, `eval`, parse errors…): such a line is
   * asked, never allowed.
   */
  followable: boolean;
  /** Why it is not followable, or other notes. */
  problems: string[];
}

export interface ShellClassifier {
  classify(command: string): ShellAnalysis;
}
