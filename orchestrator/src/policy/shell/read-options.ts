import { resolveLong, type CommandSpec } from './options';
import type { Word } from './words';

/**
 * Reads the options of a command that runs another one (`env`, `xargs`, `sudo`, `timeout`…) or of
 * a builtin that sets variables (`read -a NAME`), as the tool itself would: clustered short options
 * (`-sKILL`, `-ra NAME`), values attached or in the next word, and, for tools parsed by GNU
 * getopt_long (`abbrev: 'gnu'`), any unambiguous abbreviation of a long option, so `env --sp=…` is
 * `--split-string` and `sudo --us root` is `--user root`. Which command runs after the options
 * depends on how many words they take, so reading them as the tool does is what lets rules see it.
 */

/** Options read by `readOptions`: every name in full (`--replace` for `--repl`). */
export interface ReadOptions {
  /** Index of the first operand (the command a wrapper runs, the names a builtin sets…). */
  next: number;
  /** Every option seen, normalised to `-x` or `--name` (unknown short letters too, unknown long names not). */
  flags: Set<string>;
  /** Values of the options that take one, by their normalised name. */
  values: Map<string, Word>;
  /** The first option that is not in the spec or abbreviates more than one (the tool refuses it). */
  bad?: string;
}

/**
 * Reads options from `words[start]` on (getopt with `+`: they end at the first operand). Stops at
 * `--` (skipped) or at a word only known at run time (`$OPT` could be anything, so it is treated
 * as the operand and the caller decides what that means).
 */
export function readOptions(words: readonly Word[], start: number, s: CommandSpec): ReadOptions {
  const flags = new Set<string>();
  const values = new Map<string, Word>();
  let bad: string | undefined;
  const attached = (w: Word, from: number): Word => ({
    ...w,
    value: w.value.slice(from),
    pattern: w.value.slice(from),
  });
  let i = start;
  while (i < words.length) {
    const w = words[i]!;
    const a = w.value;
    if (!w.literal) break;
    if (a === '--') {
      i++;
      break;
    }
    if (!a.startsWith('-') || a === '-') break;
    i++;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const typed = eq < 0 ? a.slice(2) : a.slice(2, eq);
      const hit = resolveLong(s, typed);
      if (!hit || hit === 'ambiguous') {
        bad ??= `--${typed}`;
        continue;
      }
      const key = `--${hit.name}`;
      flags.add(key);
      if (eq >= 0) values.set(key, attached(w, eq + 1));
      else if (hit.def.values >= 1 && i < words.length) values.set(key, words[i++]!);
      continue;
    }
    for (let k = 1; k < a.length; k++) {
      const c = a[k]!;
      const def = s.short.get(c);
      flags.add(`-${c}`);
      if (!def) {
        bad ??= `-${c}`;
        continue;
      }
      if (def.values === 0) continue;
      if (k + 1 < a.length) values.set(`-${c}`, attached(w, k + 1));
      else if (def.values >= 1 && i < words.length) values.set(`-${c}`, words[i++]!);
      break;
    }
  }
  return { next: i, flags, values, ...(bad ? { bad } : {}) };
}
