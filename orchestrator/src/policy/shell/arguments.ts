import type { Word } from './words';

/**
 * Option-syntax helpers shared by the wrapper and command tables. They only know how options are
 * spelled (which take a value, where the operands start); what an option means for safety is
 * decided in wrappers.ts and commands.ts.
 */

export interface OptionSpec {
  /** Short options that take a value, attached (`-n5`) or as the next word (`-n 5`). */
  short?: string;
  /** Long options (without `--`) that take a value, as `--x=v` or `--x v`. */
  long?: string[];
  /** Short options whose value can only be attached (`sed -i.bak`, `xargs -i{}`); they end the cluster. */
  optional?: string;
}

export interface Options {
  /** Index of the first operand (the wrapped command, a script, a file…). */
  next: number;
  /** Every option seen, normalised to `-x` or `--name`. */
  flags: Set<string>;
  /** Values of the options that take one, by their normalised name. */
  values: Map<string, Word>;
}

/**
 * Reads options from `words[start]` on and stops at the first operand, at `--` (skipped) or at a
 * word only known at run time (`$OPT` could be anything, so it is treated as the operand and the
 * caller decides what that means).
 */
export function readOptions(words: readonly Word[], start: number, spec: OptionSpec = {}): Options {
  const flags = new Set<string>();
  const values = new Map<string, Word>();
  let i = start;
  while (i < words.length) {
    const w = words[i]!;
    if (!w.literal) break;
    const v = w.value;
    if (v === '--') {
      i++;
      break;
    }
    if (!v.startsWith('-') || v === '-') break;
    i++;
    if (v.startsWith('--')) {
      const eq = v.indexOf('=');
      const name = eq < 0 ? v.slice(2) : v.slice(2, eq);
      flags.add(`--${name}`);
      if (eq >= 0) values.set(`--${name}`, { ...w, value: v.slice(eq + 1), pattern: v.slice(eq + 1) });
      else if (spec.long?.includes(name) && i < words.length) values.set(`--${name}`, words[i++]!);
      continue;
    }
    for (let k = 1; k < v.length; k++) {
      const c = v[k]!;
      flags.add(`-${c}`);
      if (spec.optional?.includes(c)) {
        if (k + 1 < v.length) values.set(`-${c}`, { ...w, value: v.slice(k + 1), pattern: v.slice(k + 1) });
        break;
      }
      if (!spec.short?.includes(c)) continue;
      if (k + 1 < v.length) values.set(`-${c}`, { ...w, value: v.slice(k + 1), pattern: v.slice(k + 1) });
      else if (i < words.length) values.set(`-${c}`, words[i++]!);
      break;
    }
  }
  return { next: i, flags, values };
}

/** Short option letters anywhere in the words (`-fdx` has f, d and x), for "does it force?" checks. */
export function hasFlag(args: readonly string[], short: string, ...long: string[]): boolean {
  return args.some((a) =>
    a.startsWith('--')
      ? long.includes(a.split('=')[0]!)
      : a.startsWith('-') && a.length > 1 && [...short].some((c) => a.slice(1).includes(c)),
  );
}

/** Operands: the words that are not options (a rough cut, good enough for "were any given?"). */
export function operands(args: readonly string[]): string[] {
  const dd = args.indexOf('--');
  const before = dd < 0 ? args : args.slice(0, dd);
  return [...before.filter((a) => !a.startsWith('-')), ...(dd < 0 ? [] : args.slice(dd + 1))];
}

/** `NAME=value` words, as accepted by `env` and `sudo` before the command. */
export function isAssignment(w: Word): boolean {
  return w.literal && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w.value);
}

export interface ScriptEffects {
  /** The script makes the tool run other programs (`sed 's/x/y/e'`, awk `system()`). */
  runs: boolean;
  /** The script writes files itself (`sed 'w out'`, awk `print > "f"`). */
  writes: boolean;
}

function skipDelimited(s: string, i: number, delim: string): number {
  for (; i < s.length && s[i] !== delim; i++) if (s[i] === '\\') i++;
  return i + 1;
}

function skipToLineEnd(s: string, i: number): number {
  const nl = s.indexOf('\n', i);
  return nl < 0 ? s.length : nl + 1;
}

/**
 * What a sed script does beyond printing: GNU sed can run commands (`e`, the `s///e` flag) and
 * write files (`w`, `W`, the `s///w` flag). A small scanner over sed's command syntax; anything it
 * does not recognise counts as running commands, so an unusual script is asked about.
 */
export function sedEffects(s: string): ScriptEffects {
  const fx: ScriptEffects = { runs: false, writes: false };
  let i = 0;
  while (i < s.length) {
    if (/[\s;{}!]/.test(s[i]!)) {
      i++;
      continue;
    }
    // Addresses: `1`, `$`, `/re/`, `\%re%`, `first~step`, `a,b`, `a,+n`, followed by flags I/M.
    for (;;) {
      const m = /^(\d+|\$|[+~]\d+)/.exec(s.slice(i, i + 24));
      if (m) i += m[0].length;
      else if (s[i] === '/') i = skipDelimited(s, i + 1, '/');
      else if (s[i] === '\\' && i + 1 < s.length) i = skipDelimited(s, i + 2, s[i + 1]!);
      else break;
      while (s[i] === 'I' || s[i] === 'M' || s[i] === ' ') i++;
      if (s[i] === ',' || s[i] === '~') i++;
    }
    while (s[i] === ' ' || s[i] === '!') i++;
    const cmd = s[i++];
    if (cmd === undefined) break;
    if (cmd === 's' || cmd === 'y') {
      const d = s[i] ?? '/';
      i = skipDelimited(s, skipDelimited(s, i + 1, d), d);
      if (cmd === 'y') continue;
      for (; i < s.length && !/[;\n}]/.test(s[i]!); i++) {
        if (s[i] === 'e') fx.runs = true;
        if (s[i] === 'w') {
          fx.writes = true;
          i = skipToLineEnd(s, i) - 1;
        }
      }
    } else if (cmd === 'e') {
      fx.runs = true;
      i = skipToLineEnd(s, i);
    } else if (cmd === 'w' || cmd === 'W') {
      fx.writes = true;
      i = skipToLineEnd(s, i);
    } else if ('rRaic'.includes(cmd)) {
      // Text or a file name to the end of the line (a trailing backslash continues it).
      while (i < s.length) {
        const end = skipToLineEnd(s, i);
        const line = s.slice(i, end).replace(/\n$/, '');
        i = end;
        if (!line.endsWith('\\')) break;
      }
    } else if ('btTv:'.includes(cmd)) {
      while (i < s.length && !/[;\n]/.test(s[i]!)) i++;
    } else if ('qQlL'.includes(cmd)) {
      while (/[\d ]/.test(s[i] ?? '')) i++;
    } else if (cmd === '#') {
      i = skipToLineEnd(s, i);
    } else if (!'=dDgGhHnNpPxzF{}'.includes(cmd)) {
      fx.runs = true; // not a sed command this scanner knows: do not guess
      break;
    }
  }
  return fx;
}

/**
 * What an awk program does beyond printing: `system()`, `cmd | getline`, `print | "cmd"` and `|&`
 * run commands; `print > "file"` writes one. A textual check: awk has no `|` or `>` after `print`
 * that does something else, so false alarms are rare and only ever ask.
 */
export function awkEffects(program: string): ScriptEffects {
  return {
    runs: /\bsystem\s*\(/.test(program) || /(^|[^|])\|(?!\|)/.test(program),
    writes: /\bprintf?\b[^;{}\n]*>/.test(program),
  };
}
