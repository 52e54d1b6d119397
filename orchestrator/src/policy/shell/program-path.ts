import type { Verdict } from './verdict';
import { short } from './words';

/**
 * Commands run by path (`/usr/bin/git`, `./git`, `node_modules/.bin/eslint`): only the system's
 * own directories hold the programs the tables know by name.
 */

/** Directories whose programs are the system's own: `/usr/bin/git` is git, `./git` is not. */
const SYSTEM_DIRS = new Set([
  '/bin',
  '/usr/bin',
  '/usr/local/bin',
  '/sbin',
  '/usr/sbin',
  '/usr/local/sbin',
  '/opt/homebrew/bin',
]);
/** Project-local programs that are meant to be run by path. */
const LOCAL_TOOLS = new Set(['gradlew', 'mvnw', 'configure']);

/** The directory a command name gives (`/usr/bin` for `/usr/bin/git`), or undefined for a bare name. */
export function directoryOf(name: string, cmd: string): string | undefined {
  return name.includes('/') ? name.slice(0, name.length - cmd.length).replace(/\/+$/, '') || '/' : undefined;
}

/**
 * The verdict on a program run by path from outside the system directories, or undefined when
 * it is the system's own (or a project tool meant to be run by path) and the tables decide.
 */
export function programByPath(
  name: string,
  cmd: string,
  dir: string,
): { argv0: string; verdict: Verdict; problem?: string } | undefined {
  if (SYSTEM_DIRS.has(dir) || LOCAL_TOOLS.has(cmd)) return undefined;
  if (/(^|\/)node_modules\/\.bin$/.test(dir) && !dir.split('/').includes('..')) {
    // A package's program, not the system one of the same name: project code, like `npm test`,
    // and named by its path so that no rule about the system `ls` or `git` matches it.
    return {
      argv0: name,
      verdict: {
        class: 'test-build',
        reason: `runs ${short(name)}, a program installed in the project's node_modules`,
      },
    };
  }
  // `./git status` is not git: a rule about `git status` must not allow it.
  return {
    argv0: cmd,
    verdict: { class: 'unknown', reason: `runs ${short(name)}, a program outside the system directories` },
    problem: `${short(name)} is not the system ${cmd}: what it runs cannot be seen`,
  };
}
