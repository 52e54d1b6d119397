import { spec } from './options';
import { readOptions } from './read-options';
import { v, type Inner, type Judge, type Verdict } from './verdict';
import { ANY_VALUE, hasCommandText, nameProblem, riskyVariable, type Condition } from './variables';
import { short, type Word } from './words';

/**
 * Bash builtins that look harmless but set variables by name or evaluate strings. `read PATH`,
 * `printf -v PATH`, `declare -n r=PATH` change what later commands run; `let`, `[ -v 'a[…]' ]`
 * and any subscript in a variable name evaluate arithmetic, and arithmetic runs the `$(…)` of an
 * array subscript. These are judged here, from their words (after wrappers such as `builtin` or
 * `command` are removed), so the check holds however they are reached.
 */

/** The options of each builtin (bash 5.2's help): only these letters take a value; builtins take no long options. */
const READ = spec('ersa:d:i:n:N:p:t:u:', '', { abbrev: 'exact' });
const MAPFILE = spec('td:n:O:s:u:C:c:', '', { abbrev: 'exact' });
const WAIT = spec('fnp:', '', { abbrev: 'exact' });
const HASH = spec('lrdtp:', '', { abbrev: 'exact' });
const UNSET = spec('fvn', '', { abbrev: 'exact' });

/** A literal string with `$(…)` or backticks that bash evaluates: parsed too, so rules still see its commands. */
function payload(label: string, w: Word | undefined): Inner[] {
  return w?.literal && hasCommandText(w.value)
    ? [{ label, script: w, opaque: `${label}: bash evaluates ${short(w.value)}, which runs commands` }]
    : [];
}

/** What was found: problems for certain, and problems that hold unless some words are integers. */
class Findings {
  readonly problems: string[] = [];
  readonly conditions: Condition[] = [];
  readonly inner: Inner[] = [];

  add(problem: string | undefined): void {
    if (problem) this.problems.push(problem);
  }

  /**
   * A word only known at run time where the builtin still reads options: it could turn out to be
   * `-v NAME` or `-p NAME` (`x=-vPATH; printf "$x" /tmp`). An integer cannot.
   */
  option(what: string, w: Word | undefined): void {
    if (!w || w.literal) return;
    const problem = `${what} ${short(w.value)}: an argument only known at run time could be an option`;
    if (w.numeric) this.conditions.push({ names: w.numeric, problem });
    else this.problems.push(problem);
  }

  payload(label: string, w: Word | undefined): void {
    this.inner.push(...payload(label, w));
  }

  verdict(name: string, fine: string): Verdict {
    const { problems, conditions, inner } = this;
    if (problems.length === 0 && inner.length === 0)
      return v('read-only', fine, conditions.length ? { conditions } : {});
    return v('unknown', problems[0] ?? `${name} evaluates a string that runs commands`, {
      problem: problems.join('; ') || undefined,
      conditions,
      inner,
    });
  }
}

/** Builtins read options up to their first operand (`read -r NAME`); a name is checked by nameProblem. */
function read(args: readonly Word[]): Verdict {
  const f = new Findings();
  const o = readOptions(args, 0, READ);
  const names = [...(o.values.has('-a') ? [o.values.get('-a')!] : []), ...args.slice(o.next)];
  for (const w of names) {
    f.add(nameProblem('read', w));
    f.payload('read', w);
  }
  return f.verdict('read', 'read sets shell variables from its input');
}

function mapfile(name: string, args: readonly Word[]): Verdict {
  const f = new Findings();
  const o = readOptions(args, 0, MAPFILE);
  const callback = o.values.get('-C');
  if (callback) {
    // `mapfile -C CODE` evaluates CODE every few lines: a shell string.
    const problem = `${name} -C runs ${short(callback.value)} as a command`;
    f.add(problem);
    f.inner.push({ label: `${name} -C`, script: callback, opaque: problem });
  }
  for (const w of args.slice(o.next)) {
    f.add(nameProblem(name, w));
    f.payload(name, w);
  }
  return f.verdict(name, `${name} sets an array from its input`);
}

function printf(args: readonly Word[]): Verdict {
  const f = new Findings();
  const first = args[0];
  // `printf "$fmt"` is fine unless fmt could start with `-v`: a word that starts with an expansion or a dash.
  if (first && !first.literal && /^[$`-]/.test(first.value)) f.option('printf', first);
  else if (first?.literal && first.value.startsWith('-v')) {
    const name = first.value === '-v' ? args[1] : { ...first, value: first.value.slice(2), pattern: '' };
    f.add(name && nameProblem('printf -v', name));
    f.payload('printf -v', name);
  }
  return f.verdict('printf', 'printf only prints or sets a shell variable');
}

function getopts(args: readonly Word[]): Verdict {
  const f = new Findings();
  const name = args[1];
  f.add(name && nameProblem('getopts', name));
  f.payload('getopts', name);
  return f.verdict('getopts', 'getopts reads options into a shell variable');
}

function wait(args: readonly Word[]): Verdict {
  const f = new Findings();
  const o = readOptions(args, 0, WAIT);
  const name = o.values.get('-p');
  f.add(name && nameProblem('wait -p', name));
  f.payload('wait -p', name);
  // Options are read up to the first operand: one only known at run time could be `-p NAME`.
  f.option('wait', args[o.next]);
  return f.verdict('wait', 'wait waits for jobs');
}

function hash(args: readonly Word[]): Verdict {
  const f = new Findings();
  const o = readOptions(args, 0, HASH);
  if (o.values.has('-p')) f.add('hash -p makes a command name run another program');
  for (const w of args) f.option('hash', w);
  return f.verdict('hash', 'hash lists or forgets remembered command locations');
}

const UNARY_TESTS = new Set([
  '-a',
  '-b',
  '-c',
  '-d',
  '-e',
  '-f',
  '-g',
  '-h',
  '-k',
  '-p',
  '-r',
  '-s',
  '-t',
  '-u',
  '-w',
  '-x',
  '-G',
  '-L',
  '-N',
  '-O',
  '-S',
  '-z',
  '-n',
  '-o',
  '!',
]);
const BINARY_TESTS = new Set([
  '=',
  '==',
  '!=',
  '<',
  '>',
  '-eq',
  '-ne',
  '-lt',
  '-le',
  '-gt',
  '-ge',
  '-nt',
  '-ot',
  '-ef',
  '-a',
  '-o',
]);

/**
 * `test` / `[`: `-v NAME` evaluates NAME's subscript. A word only known at run time is safe where
 * it can only be an operand (after a unary operator, next to a binary one, or alone); elsewhere it
 * could turn out to be `-v` itself.
 */
function test(name: string, all: readonly Word[]): Verdict {
  const f = new Findings();
  const args = name === '[' && all.at(-1)?.literal && all.at(-1)!.value === ']' ? all.slice(0, -1) : all;
  const lit = (w: Word | undefined, set: Set<string>) => w !== undefined && w.literal && set.has(w.value);
  args.forEach((w, i) => {
    if (w.literal && (w.value === '-v' || w.value === '-R') && args[i + 1]) {
      f.add(nameProblem(`${name} ${w.value}`, args[i + 1]!, false));
      f.payload(`${name} ${w.value}`, args[i + 1]);
    }
    if (
      args.length === 1 ||
      (lit(args[i - 1], UNARY_TESTS) && args[i - 1]!.value !== '!') ||
      lit(args[i - 1], BINARY_TESTS) ||
      lit(args[i + 1], BINARY_TESTS)
    )
      return;
    f.option(name, w);
  });
  return f.verdict(name, `${name} only tests`);
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)(\[.*?\])?(\+?=)(.*)$/s;
const NAME = /^([A-Za-z_][A-Za-z0-9_]*)(\[.*\])?$/s;

/**
 * `declare`, `typeset`, `local`, `export`, `readonly`: `-n` makes a name an alias of another
 * variable (`declare -n r=PATH; r=/tmp`), `-i` makes every later assignment arithmetic; both are
 * not followed. Assignments are checked like any other (what their values mean in arithmetic is
 * evaluation.ts's business); a word that is only known at run time could name any variable.
 */
export function declaration(keyword: string, words: readonly Word[]): Verdict {
  const f = new Findings();
  for (const w of words) {
    if (w.literal && /^[-+]./.test(w.value)) {
      if (/^-[A-Za-z]*[ni]/.test(w.value))
        f.add(
          `${keyword} ${w.value}: ` +
            (w.value.includes('n')
              ? 'a name reference makes one variable set another'
              : 'integer variables evaluate what is assigned to them as arithmetic'),
        );
      continue;
    }
    const assign = ASSIGNMENT.exec(w.value);
    if (assign) {
      const [, name, subscript, , value] = assign as unknown as [string, string, string | undefined, string, string];
      if (riskyVariable(name, w.literal ? value : ANY_VALUE))
        f.add(`${keyword} sets ${name}, which changes what later commands run`);
      if (subscript !== undefined)
        f.add(nameProblem(keyword, { value: name + subscript, literal: true, pattern: '' }, false));
    } else if (w.literal && NAME.test(w.value)) {
      f.add(nameProblem(keyword, w, false));
      f.payload(keyword, w);
    } else if (!w.literal) {
      f.add(`${keyword} ${short(w.value)}: what it declares is only known at run time`);
    }
  }
  return f.verdict(keyword, `${keyword} sets shell variables`);
}

/** `unset NAME…`: a subscript is evaluated; `-f` names functions, which are not evaluated. */
export function unset(words: readonly Word[]): Verdict {
  const f = new Findings();
  const o = readOptions(words, 0, UNSET);
  const functions = o.flags.has('-f');
  for (const w of words.slice(o.next)) {
    if (functions) f.add(w.literal ? undefined : `unset -f ${short(w.value)}: the name is only known at run time`);
    else {
      // Unsetting PATH or git's overrides changes what later commands run as much as setting them.
      f.add(nameProblem('unset', w, true));
      f.payload('unset', w);
    }
  }
  return f.verdict('unset', 'unset removes shell variables');
}

export const BUILTINS: Record<string, Judge> = {
  read: (args) => read(args),
  mapfile: (args, typed) => mapfile(typed, args),
  readarray: (args, typed) => mapfile(typed, args),
  printf: (args) => printf(args),
  getopts: (args) => getopts(args),
  wait: (args) => wait(args),
  hash: (args) => hash(args),
  // `let` evaluates each argument as arithmetic; a quoted `a[$(cmd)]` in one runs cmd.
  let: (args) => {
    const f = new Findings();
    f.add('let evaluates its arguments as arithmetic, which can run commands');
    for (const w of args) f.payload('let', w);
    return f.verdict('let', '');
  },
  test: (args) => test('test', args),
  '[': (args) => test('[', args),
  unset: (args) => unset(args),
  declare: (args) => declaration('declare', args),
  typeset: (args) => declaration('typeset', args),
  local: (args) => declaration('local', args),
  export: (args) => declaration('export', args),
  readonly: (args) => declaration('readonly', args),
};
