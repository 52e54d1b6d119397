import type { CommandClass } from './types';
import type { Condition } from './variables';
import { isGlob, short, type Word } from './words';

/**
 * The option-spec language (`spec`), shared by the read-only allowlist (tables/readonly.ts) and
 * the option reader of wrappers and builtins (read-options.ts), and the allowlist's judge. A
 * command is read-only only when every option it is given is one known to be read-only, however
 * it is spelled: `--opt=value`, `--opt value`, clustered short flags (`-nr`, `-oFILE`), and, for
 * tools parsed by GNU getopt_long, any unambiguous abbreviation of a long option (`sort
 * --compress-prog=x` is `--compress-program`). Abbreviations are therefore decided against the
 * tool's full list of long options, including the ones that are not read-only.
 */

/**
 * What an option does beyond reading: `>` writes its value (a file), `!` runs a program, `+` changes files otherwise,
 * `#` changes the system.
 */
export type Effect = '>' | '!' | '+' | '#';

export interface OptionDef {
  /** 0: a flag; 1: takes a value; 2: takes two (`jq --arg NAME VALUE`); -1: an optional value, attached only. */
  values: -1 | 0 | 1 | 2;
  effect?: Effect;
}

export interface CommandSpec {
  short: Map<string, OptionDef>;
  long: Map<string, OptionDef>;
  /**
   * How long options may be shortened: 'gnu' (any unambiguous prefix, getopt_long and argp) or
   * 'exact' (clap, lexopt and hand-written parsers; also where the full list is not known for sure,
   * so that an unlisted option cannot hide behind a listed one's prefix).
   */
  abbrev: 'gnu' | 'exact';
  /** Short options that take a value take the next word even inside a cluster (`tree -ao FILE`). */
  nextWordValues?: boolean;
  /** `-20` (head, tail, seq, fmt…) is a number, not an option. */
  numeric?: boolean;
  /** Judges the operands: which are written, or what else they make the command do. */
  operands?: (ops: readonly Word[]) => OperandEffect | undefined;
  /** Options end at the first operand (getopt's `+`: gawk, env, xargs, time); later words are all operands. */
  stopAtOperand?: boolean;
}

export interface OperandEffect {
  class: CommandClass;
  reason: string;
  writes?: string[];
}

export interface OptionVerdict {
  class: CommandClass;
  reason?: string;
  /** Files the options or operands write (`sort -o F`, `uniq IN OUT`), for the path rules. */
  writes: string[];
  /** Problems that hold unless some variables only ever hold integers (`sort $n`): see evaluation.ts. */
  conditions: Condition[];
  /** The options given, by full name (`-e`, `--expression` for `--exp`), with their values: for custom judges. */
  given?: GivenOption[];
  /** The operands, in order. */
  operands?: Word[];
}

export interface GivenOption {
  name: string;
  value?: Word;
}

const EFFECT_CLASS: Record<Effect, CommandClass> = { '>': 'write', '+': 'write', '!': 'unknown', '#': 'privilege' };
const EFFECT_WORDS: Record<Effect, string> = {
  '>': 'writes a file',
  '+': 'changes files',
  '!': 'runs another program',
  '#': 'changes the system',
};
const RANK: Record<CommandClass, number> = {
  'read-only': 0,
  'test-build': 1,
  write: 2,
  destructive: 3,
  network: 4,
  privilege: 5,
  unknown: 6,
};

/**
 * Compiles a spec. Short options: letters, each optionally followed by `:` (takes a value), `::`
 * (optional value, attached only) or `;` (two values), then an effect mark. Long options:
 * space-separated names with the same suffixes written `=`, `?` and `==`, then an effect mark.
 * Example: short `bo:>`, long `output=> compress-program=! reverse`.
 */
export function spec(
  shortSpec: string,
  longSpec: string,
  extra: Omit<CommandSpec, 'short' | 'long' | 'abbrev'> & { abbrev?: 'gnu' | 'exact' } = {},
): CommandSpec {
  const shortMap = new Map<string, OptionDef>();
  for (const m of shortSpec.matchAll(/([A-Za-z0-9])(::|:|;)?([>!+#])?/g)) {
    shortMap.set(m[1]!, {
      values: m[2] === '::' ? -1 : m[2] === ':' ? 1 : m[2] === ';' ? 2 : 0,
      ...(m[3] ? { effect: m[3] as Effect } : {}),
    });
  }
  const longMap = new Map<string, OptionDef>();
  for (const tok of longSpec.trim().split(/\s+/).filter(Boolean)) {
    const m = /^([A-Za-z0-9][A-Za-z0-9-]*)(==|=|\?)?([>!+#])?$/.exec(tok);
    if (!m) throw new Error(`bad long option spec: ${tok}`);
    longMap.set(m[1]!, {
      values: m[2] === '==' ? 2 : m[2] === '=' ? 1 : m[2] === '?' ? -1 : 0,
      ...(m[3] ? { effect: m[3] as Effect } : {}),
    });
  }
  for (const common of ['help', 'version']) if (!longMap.has(common)) longMap.set(common, { values: 0 });
  return { short: shortMap, long: longMap, abbrev: extra.abbrev ?? 'gnu', ...extra };
}

/** The worse of two classes (the order of COMMAND_CLASSES). */
export function worse(a: CommandClass, b: CommandClass): CommandClass {
  return RANK[b] > RANK[a] ? b : a;
}

/** The long option a typed name stands for: exact, else a unique prefix (GNU), else undefined. */
export function resolveLong(s: CommandSpec, typed: string): { name: string; def: OptionDef } | 'ambiguous' | undefined {
  const exact = s.long.get(typed);
  if (exact) return { name: typed, def: exact };
  if (s.abbrev !== 'gnu' || typed === '') return undefined;
  const hits = [...s.long.keys()].filter((n) => n.startsWith(typed));
  if (hits.length === 1) return { name: hits[0]!, def: s.long.get(hits[0]!)! };
  return hits.length > 1 ? 'ambiguous' : undefined;
}

/**
 * The class a command's options and operands give it: read-only when every option is a known
 * read-only one and the operands are harmless; otherwise the effect of the worst option, or
 * `unknown` for an option the spec does not know (it could be one added in another version).
 */
export function judgeOptions(name: string, s: CommandSpec, args: readonly Word[]): OptionVerdict {
  let worst: { class: CommandClass; reason?: string } = { class: 'read-only' };
  const writes: string[] = [];
  const conditions: Condition[] = [];
  const given: GivenOption[] = [];
  const raise = (cls: CommandClass, reason: string) => {
    if (RANK[cls] > RANK[worst.class]) worst = { class: cls, reason };
  };
  const effect = (opt: string, def: OptionDef, value: Word | undefined) => {
    given.push(value ? { name: opt, value } : { name: opt });
    if (!def.effect) return;
    if (def.effect === '>' && value) {
      if (value.literal) writes.push(value.value);
      else raise('unknown', `${name} ${opt} writes a file whose name is only known at run time`);
    }
    raise(EFFECT_CLASS[def.effect], `${name} ${opt} ${EFFECT_WORDS[def.effect]}`);
  };
  const hasRisk = [...s.short.values(), ...s.long.values()].some((d) => d.effect) || s.operands !== undefined;
  const ops: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (!w.literal) {
      // `$OPTS` could be any option, and unquoted it could split into several words; an integer cannot.
      const problem =
        `${name} ${short(w.value)}: ` + 'an argument only known at run time could be an option that is not read-only';
      if (hasRisk && w.numeric) conditions.push({ names: w.numeric, problem });
      else if (hasRisk) raise('unknown', problem);
      ops.push(w);
      continue;
    }
    const a = w.value;
    if (a === '--') {
      ops.push(...args.slice(i + 1));
      break;
    }
    if (hasRisk && /^[*?[]/.test(w.pattern) && isGlob(w.pattern)) {
      // `rg foo *` in a repository holding a file named `--pre=./x.sh` runs x.sh.
      raise('unknown', `${name} ${short(a)}: the glob could expand to a file name that is an option (put it after --)`);
    }
    if (!a.startsWith('-') || a === '-' || (s.numeric && /^-\d[\d.,]*[a-z]?$/.test(a))) {
      if (s.stopAtOperand) {
        ops.push(...args.slice(i));
        break;
      }
      ops.push(w);
      continue;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const typed = eq < 0 ? a.slice(2) : a.slice(2, eq);
      const hit = resolveLong(s, typed);
      if (hit === 'ambiguous') {
        raise('unknown', `${name} --${short(typed)}: an abbreviation of more than one option`);
        continue;
      }
      if (!hit) {
        raise('unknown', `${name} --${short(typed)}: not an option known to be read-only`);
        continue;
      }
      let value: Word | undefined;
      if (eq >= 0) value = { ...w, value: a.slice(eq + 1), pattern: '' };
      else if (hit.def.values >= 1) value = args[++i];
      if (hit.def.values === 2) i++;
      effect(`--${hit.name}`, hit.def, value);
      continue;
    }
    for (let k = 1; k < a.length; k++) {
      const c = a[k]!;
      const def = s.short.get(c);
      if (!def) {
        raise('unknown', `${name} -${c}: not an option known to be read-only`);
        break;
      }
      if (def.values === 0) {
        effect(`-${c}`, def, undefined);
        continue;
      }
      let value: Word | undefined;
      if (def.values === -1) value = k + 1 < a.length ? { ...w, value: a.slice(k + 1), pattern: '' } : undefined;
      else if (s.nextWordValues || k + 1 === a.length) {
        value = args[++i];
        if (def.values === 2) i++;
      } else value = { ...w, value: a.slice(k + 1), pattern: '' };
      effect(`-${c}`, def, value);
      if (!s.nextWordValues || def.values === -1) break;
    }
  }
  const fx = s.operands?.(ops);
  if (fx) {
    writes.push(...(fx.writes ?? []));
    raise(fx.class, fx.reason);
  }
  return { ...worst, writes, conditions, given, operands: ops };
}

/** For specs: the operand at `index` is an output file (`uniq IN OUT`, `xxd IN OUT`). */
export function outputOperand(index: number, what: string): (ops: readonly Word[]) => OperandEffect | undefined {
  return (ops) => {
    // `uniq *.log` writes the second file the glob finds.
    const glob = ops.slice(0, index + 1).find((o) => o.literal && isGlob(o.pattern));
    if (glob)
      return {
        class: 'unknown',
        reason: `${what}: ${short(glob.value)} could expand to several files, the last one written`,
      };
    const out = ops[index];
    if (!out) return undefined;
    if (!out.literal) return { class: 'unknown', reason: `${what} writes a file whose name is only known at run time` };
    return out.value === '-'
      ? undefined
      : { class: 'write', reason: `${what} writes ${short(out.value)}`, writes: [out.value] };
  };
}
