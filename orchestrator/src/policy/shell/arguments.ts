import type { Word } from './words';

/**
 * Argument helpers shared by the judges: rough option and operand checks, and scanners for the
 * scripts sed and awk take. How options are read word by word is read-options.ts; what an option
 * means for safety is decided by the judges and the tables.
 */

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
