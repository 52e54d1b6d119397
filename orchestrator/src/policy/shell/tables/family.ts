import type { CommandClass } from '../types';

/**
 * The shape shared by the classifier's tables. Each family of commands (git, package managers,
 * interpreters, build tools, system tools, coreutils) is one file of data in this folder; the code
 * that reads it lives beside commands.ts. Like the rules of Codex's execpolicy, each family carries
 * examples of what it means, and a test (orchestrator/test/policy/shell-tables.test.ts) runs every
 * example through the classifier, so a table edit that changes what an example gets fails there.
 */

/** A command line and the class the classifier must give it. */
export type Example = readonly [command: string, cls: CommandClass];

/** Commands whose class does not depend on their arguments, as space-separated names by class. */
export type ClassLists = Partial<Record<CommandClass, string>>;

/** Names to the command they stand for (`gsed` is `sed`). */
export type Aliases = Record<string, string>;

/** A tool's subcommands by class, and the class of a subcommand the table does not list. */
export interface SubcommandTable {
  classes: Record<string, CommandClass>;
  otherwise: CommandClass;
}

/** A space-separated list of names, as a table writes them. */
export function names(list: string): string[] {
  return list.trim().split(/\s+/).filter(Boolean);
}

/** Name → class, from lists by class; a name listed under two classes is a table error. */
export function classTable(...families: ClassLists[]): Record<string, CommandClass> {
  const table: Record<string, CommandClass> = {};
  for (const [cls, list] of families.flatMap((lists) => Object.entries(lists) as [CommandClass, string][])) {
    for (const n of names(list)) {
      if (table[n] && table[n] !== cls) throw new Error(`${n} is listed as both ${table[n]} and ${cls}`);
      table[n] = cls;
    }
  }
  return table;
}

/**
 * `table[key]` for a key taken from a command line: only the table's own entries, so that a
 * word such as `constructor` or `toString` does not find what every object inherits.
 */
export function lookup<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
