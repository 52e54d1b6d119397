import { BUILD_JUDGES } from './build-tools';
import { BUILTINS } from './builtins';
import { git } from './git-command';
import { INTERPRETER_JUDGES } from './interpreters';
import { judgeOptions } from './options';
import { PACKAGE_MANAGER_JUDGES } from './package-managers';
import { SYSTEM_JUDGES } from './system-tools';
import { BUILD_ALIASES, BUILD_CLASSES } from './tables/build-tools';
import { COREUTILS_ALIASES, COREUTILS_CLASSES, RUNS_PROGRAM } from './tables/coreutils';
import { classTable, lookup } from './tables/family';
import { INTERPRETER_ALIASES } from './tables/interpreters';
import { PACKAGE_MANAGER_ALIASES } from './tables/package-managers';
import { CUSTOM_JUDGES, FREE, READ_ONLY_SPECS } from './tables/readonly';
import { SYSTEM_ALIASES, SYSTEM_CLASSES } from './tables/system-tools';
import { COREUTILS_JUDGES } from './coreutils';
import { fromOptions, plain, v, type Judge, type Verdict } from './verdict';
import type { Word } from './words';

/**
 * Which class a command belongs to: the dispatcher over the tables in tables/ (one file per family
 * of commands) and the judges beside this file. A command that is in no table is `unknown`, and
 * unknown is asked about. Wrappers (`sudo`, `env`, `xargs`, `bash -c`…) are unwrapped before this
 * is consulted; see wrappers.ts.
 */

/** Every judge by name; a name two families both judge is a table error. */
function judges(...families: Record<string, Judge>[]): Record<string, Judge> {
  const all: Record<string, Judge> = {};
  for (const family of families) {
    for (const [name, judge] of Object.entries(family)) {
      if (Object.hasOwn(all, name)) throw new Error(`${name} is judged by two families`);
      all[name] = judge;
    }
  }
  return all;
}

/** Commands whose class depends on their arguments. */
const JUDGES = judges(
  BUILTINS,
  COREUTILS_JUDGES,
  { git: (args) => git(args) },
  PACKAGE_MANAGER_JUDGES,
  INTERPRETER_JUDGES,
  BUILD_JUDGES,
  SYSTEM_JUDGES,
);

/** Commands whose class does not depend on their arguments (read-only ones: on their options, see readOnly). */
const CLASSES = classTable(COREUTILS_CLASSES, BUILD_CLASSES, SYSTEM_CLASSES);

/** Other names of commands (`gsed` is `sed`, `python3` is `python`). */
const ALIASES: Record<string, string> = {
  ...SYSTEM_ALIASES,
  ...COREUTILS_ALIASES,
  ...INTERPRETER_ALIASES,
  ...PACKAGE_MANAGER_ALIASES,
  ...BUILD_ALIASES,
};

/** The commands of the read-only table, for tests that check each has an option allowlist. */
export function readOnlyCommands(): string[] {
  return Object.keys(CLASSES).filter((n) => CLASSES[n] === 'read-only');
}

/**
 * The class of one command, given its name (already a basename, quotes removed) and its
 * arguments. Wrappers have been unwrapped by the caller.
 */
export function classifyCommand(typed: string, args: readonly Word[]): Verdict {
  const base = typed.replace(/^(python|pip)[\d.]+$/, '$1').replace(/^mkfs\..*$/, 'mkfs');
  const name = lookup(ALIASES, base) ?? base;
  const a = args.map((w) => w.value);
  const runs = lookup(RUNS_PROGRAM, name)?.find((o) =>
    a.some((x) => x === o || x.startsWith(o.length === 2 ? o : `${o}=`)),
  );
  if (runs) return v('unknown', `${typed} ${runs} runs another program`);
  const judge = lookup(JUDGES, name);
  if (judge) return judge(args, typed, classifyCommand);
  const cls = lookup(CLASSES, name);
  if (cls === 'read-only') return readOnly(name, typed, args);
  return cls ? plain(typed, cls) : plain(typed, 'unknown');
}

/**
 * A command of the read-only table is read-only only with options known to be read-only
 * (tables/readonly.ts); any other option gives it that option's class, an unknown one `unknown`.
 */
function readOnly(name: string, typed: string, args: readonly Word[]): Verdict {
  if (FREE.has(name)) return plain(typed, 'read-only');
  const spec = lookup(READ_ONLY_SPECS, name);
  const custom = lookup(CUSTOM_JUDGES, name);
  if (!spec && !custom) return v('unknown', `${typed}: no read-only options are listed for it`);
  return fromOptions(typed, custom ? custom(args) : judgeOptions(typed, spec!, args));
}
