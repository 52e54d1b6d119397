import type { SyntaxNode } from './syntax';

/**
 * One shell word as the classifier sees it. Quoting is removed (`'git'`, `"git"`, `\git` and
 * `g''it` are all `git`) because bash removes it before running anything; expansions are kept as
 * written (`$HOME`, `$(curl x)`) because their values are only known at run time.
 */
export interface Word {
  /** The word with quotes and backslashes removed; expansions kept as written. */
  value: string;
  /** True when bash would run exactly `value`: no parameter, command or arithmetic expansion. */
  literal: boolean;
  /**
   * For literal words, `value` with every quoted non-alphanumeric character backslash-escaped, so
   * brace expansion and glob checks can tell `{a,b}` (expanded by bash) from `"{a,b}"` (not).
   * Empty for words that are not literal.
   */
  pattern: string;
  /**
   * Set by the walker on a word that is not literal but is an integer (so it cannot be an option
   * such as `-v`) provided the variables listed only ever hold integers: `[]` for `$?`, `$!`,
   * `$((…))`; `['pid']` for `"$pid"`. See evaluation.ts.
   */
  numeric?: string[];
}

const EXPANSIONS = new Set([
  'simple_expansion',
  'expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
]);

/** Quoted text in pattern form: anything that could look special is escaped. */
function quoted(s: string): string {
  return s.replace(/[^A-Za-z0-9_]/g, '\\$&');
}

function literalWord(value: string, pattern = quoted(value)): Word {
  return { value, literal: true, pattern };
}

/** Expansions: the pattern is never consulted for these (and computing it is quadratic on nested input). */
function dynamicWord(value: string): Word {
  return { value, literal: false, pattern: '' };
}

function concat(parts: Word[]): Word {
  const literal = parts.every((p) => p.literal);
  return {
    value: parts.map((p) => p.value).join(''),
    literal,
    pattern: literal ? parts.map((p) => p.pattern).join('') : '',
  };
}

/** An unquoted word: a backslash quotes the next character; backslash-newline is a line continuation. */
function unquotedWord(text: string): Word {
  let value = '';
  let pattern = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      const next = text[++i]!;
      if (next === '\n') continue;
      value += next;
      pattern += quoted(next);
    } else {
      value += c;
      pattern += c;
    }
  }
  return literalWord(value, pattern);
}

/** Inside double quotes a backslash only quotes `$`, `` ` ``, `"`, `\` and newline. */
function doubleQuotedText(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === '\n' ? '' : c));
}

/** `"…"` (or `$"…"`): literal text between the children, expansions kept as written. */
function doubleQuoted(node: SyntaxNode, open: number): Word {
  const parts: Word[] = [];
  let pos = node.start + open;
  const gap = (to: number) => {
    if (to > pos) parts.push(literalWord(doubleQuotedText(node.text.slice(pos - node.start, to - node.start))));
  };
  for (const child of node.children) {
    if (!child.named) continue; // the quote tokens
    gap(child.start);
    parts.push(child.type === 'string_content' ? literalWord(doubleQuotedText(child.text)) : dynamicWord(child.text));
    pos = child.end;
  }
  const closed = node.text.length > open && node.text.endsWith('"');
  gap(closed ? node.end - 1 : node.end);
  return concat(parts);
}

const C_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** `$'…'`: ANSI-C escapes, so `$'\x67it'` is `git`. */
export function ansiC(body: string): string {
  return body.replace(/\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)/gs, (m, e: string) => {
    if (e in C_ESCAPES) return C_ESCAPES[e]!;
    if (/^[xuU]/.test(e)) return String.fromCodePoint(Math.min(parseInt(e.slice(1), 16), 0x10ffff));
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8) & 0xff);
    if (e[0] === 'c') return String.fromCharCode(e.charCodeAt(1) & 0x1f);
    return m; // unknown escapes stay as written, as in bash
  });
}

function hasExpansion(node: SyntaxNode): boolean {
  return EXPANSIONS.has(node.type) || node.children.some(hasExpansion);
}

/** The word a syntax node stands for (an argument, a command name, a redirect target…). */
export function wordOf(node: SyntaxNode): Word {
  switch (node.type) {
    case 'command_name':
      if (node.children.length === 0) return unquotedWord(node.text); // children not copied (too deep)
      return node.children.length === 1 ? wordOf(node.children[0]!) : concat(node.children.map(wordOf));
    case 'word':
      return unquotedWord(node.text);
    case 'number':
    case 'brace_expression': // `{1..3}`: expanded later, like `{a,b}`
      return literalWord(node.text, node.text);
    case 'raw_string':
      return literalWord(node.text.slice(1, node.text.endsWith("'") && node.text.length > 1 ? -1 : undefined));
    case 'ansi_c_string':
      return literalWord(ansiC(node.text.slice(2, node.text.endsWith("'") && node.text.length > 2 ? -1 : undefined)));
    case 'string':
      return doubleQuoted(node, 1);
    case 'translated_string':
      return doubleQuoted(node, 2);
    case 'concatenation':
      return concat(node.children.map(wordOf));
    default:
      if (EXPANSIONS.has(node.type)) return dynamicWord(node.text);
      return hasExpansion(node) ? dynamicWord(node.text) : unquotedWord(node.text);
  }
}

/**
 * The words of a list of argument nodes. tree-sitter-bash sometimes splits one shell word into
 * sibling nodes (`$"x"` becomes `$` and `"x"`, and a backslash-newline inside a word ends its node);
 * siblings with nothing, or only line continuations, between them are one word, as bash sees them.
 * `parent` is the node that contains them, for the text between.
 */
export function wordsOf(nodes: SyntaxNode[], parent?: SyntaxNode): Word[] {
  const words: Word[] = [];
  let prev: SyntaxNode | undefined;
  for (const node of nodes) {
    const stray$ = prev?.type === '$' && (node.type === 'string' || node.type === 'raw_string');
    const w = wordOf(node);
    const gap = prev && parent ? parent.text.slice(prev.end - parent.start, node.start - parent.start) : undefined;
    if (prev && words.length > 0 && (prev.end === node.start || (gap !== undefined && /^(\\\n)+$/.test(gap)))) {
      let last = words.pop()!;
      if (stray$) last = { ...last, value: last.value.slice(0, -1), pattern: last.pattern.slice(0, -1) };
      words.push(concat([last, w]));
    } else {
      words.push(w);
    }
    prev = node;
  }
  return words;
}

/** Problems quote words; a pathological word must not make a pathological message. */
export function short(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** `/usr/bin/git` → `git`; bash runs the same program whichever spelling is used. */
export function basename(name: string): string {
  const trimmed = name.replace(/\/+$/, '');
  const i = trimmed.lastIndexOf('/');
  return i < 0 || i === trimmed.length - 1 ? trimmed || name : trimmed.slice(i + 1);
}

/** True when the pattern has an unquoted `*`, `?` or `[`: bash would replace it with file names. */
export function isGlob(pattern: string): boolean {
  return /(^|[^\\])(\\\\)*[*?[]/.test(pattern);
}

export function unescapePattern(pattern: string): string {
  return pattern.replace(/\\(.)/gs, '$1');
}

/** More words than this from one brace expansion is not a command a person meant to type. */
export const MAX_BRACE_WORDS = 256;
const MAX_BRACE_GROUPS = 32;

interface BraceGroup {
  open: number;
  close: number;
  parts: string[] | 'too-big';
}

function sequence(body: string): string[] | 'too-big' | null {
  const num = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(body);
  const chr = /^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
  const m = num ?? chr;
  if (!m) return null;
  const from = num ? Number(m[1]) : m[1]!.charCodeAt(0);
  const to = num ? Number(m[2]) : m[2]!.charCodeAt(0);
  const step = Math.abs(Number(m[3] ?? 1)) || 1;
  if (Math.abs(to - from) / step >= MAX_BRACE_WORDS) return 'too-big';
  // `{01..10}` pads every number to the widest end, as bash does.
  const width = num && (/^-?0\d/.test(m[1]!) || /^-?0\d/.test(m[2]!)) ? Math.max(m[1]!.length, m[2]!.length) : 0;
  const pad = (n: number) => (n < 0 ? `-${String(-n).padStart(width - 1, '0')}` : String(n).padStart(width, '0'));
  const out: string[] = [];
  for (let v = from; from <= to ? v <= to : v >= to; v += from <= to ? step : -step)
    out.push(num ? pad(v) : String.fromCharCode(v));
  return out;
}

/** The first `{…}` bash would expand: it needs a top-level comma or a `a..b` sequence. */
function firstBraceGroup(p: string): BraceGroup | null {
  for (let open = 0; open < p.length; open++) {
    if (p[open] === '\\') {
      open++;
      continue;
    }
    if (p[open] !== '{') continue;
    let depth = 0;
    const commas: number[] = [];
    for (let j = open + 1; j < p.length; j++) {
      const c = p[j];
      if (c === '\\') j++;
      else if (c === '{') depth++;
      else if (c === ',' && depth === 0) commas.push(j);
      else if (c === '}' && depth-- === 0) {
        if (commas.length > 0) {
          const bounds = [open, ...commas, j];
          return { open, close: j, parts: bounds.slice(1).map((b, k) => p.slice(bounds[k]! + 1, b)) };
        }
        const seq = sequence(p.slice(open + 1, j));
        if (seq) return { open, close: j, parts: seq };
        break;
      }
    }
  }
  return null;
}

/**
 * Brace expansion (`rm -rf {/,x}` runs `rm -rf / x`): purely textual in bash, so it is done here
 * to give rules the words bash would run. Returns null when the result would be unreasonably large.
 */
export function expandBraces(word: Word): Word[] | null {
  if (!word.literal || !/(^|[^\\])(\\\\)*\{/.test(word.pattern)) return [word];
  const out: string[] = [];
  const expand = (p: string, groups: number): boolean => {
    const g = firstBraceGroup(p);
    if (!g) {
      out.push(p);
      return out.length <= MAX_BRACE_WORDS;
    }
    if (groups >= MAX_BRACE_GROUPS || g.parts === 'too-big') return false;
    for (const part of g.parts) {
      if (!expand(p.slice(0, g.open) + part + p.slice(g.close + 1), groups + 1)) return false;
    }
    return true;
  };
  if (!expand(word.pattern, 0)) return null;
  // An unquoted expansion that comes out empty is dropped, as bash drops empty unquoted words.
  return out.filter((p) => p !== '').map((p) => ({ value: unescapePattern(p), literal: true, pattern: p }));
}
