import { hasFlag } from './arguments';
import { bySubcommand } from './by-subcommand';
import { make } from './make';
import { BUILD_SUBCOMMANDS, CHECKERS, FIXERS, type Switched } from './tables/build-tools';
import { plain, v, type Judge } from './verdict';

/** Judges for the build tools of tables/build-tools.ts: by subcommand, by a write or check switch, and make. */

/** A formatter or linter that writes with a switch (`eslint --fix`). */
function fixer(s: Switched): Judge {
  return (args, typed) =>
    hasFlag(
      args.map((w) => w.value),
      s.short,
      ...s.long,
    )
      ? v(s.with, `${typed} ${s.long[0] ?? '-' + s.short[0]} rewrites files`)
      : plain(typed, s.without);
}

/** A formatter that writes unless told only to check (`black --check`). */
function checker(s: Switched): Judge {
  return (args, typed) =>
    hasFlag(
      args.map((w) => w.value),
      s.short,
      ...s.long,
    )
      ? v(s.with, `${typed} only checks`)
      : v(s.without, `${typed} rewrites files`);
}

const each = <T>(table: Record<string, T>, judge: (name: string, entry: T) => Judge): Record<string, Judge> =>
  Object.fromEntries(Object.entries(table).map(([name, entry]) => [name, judge(name, entry)]));

/** The judges of this family, by command name. */
export const BUILD_JUDGES: Record<string, Judge> = {
  make: (args, typed) => make(typed, args),
  gmake: (args, typed) => make(typed, args),
  ruff: (args) => {
    const a = args.map((w) => w.value);
    return (a[0] === 'format' && !hasFlag(a, '', '--check', '--diff')) || hasFlag(a, '', '--fix')
      ? v('write', 'ruff rewrites files')
      : v('test-build', 'ruff lints');
  },
  ...each(BUILD_SUBCOMMANDS, (_, table) => bySubcommand(table)),
  ...each(FIXERS, (_, s) => fixer(s)),
  ...each(CHECKERS, (_, s) => checker(s)),
};
