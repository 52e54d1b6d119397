/**
 * Glob matching in time linear in (path length × pattern length). The daemon matches model-chosen
 * patterns against every workspace path; a regex-based matcher backtracks exponentially on
 * patterns like `*a*a*a*a*ab`, and a frozen daemon is a lost sandbox.
 *
 * Supported: `*` (within a segment), `?`, `[abc]` / `[a-z]` / `[!x]`, `{a,b}` alternatives, and
 * `**` as a whole segment (any number of segments, including none). Dotfiles match like any name.
 */
type Token =
  | { kind: 'lit'; ch: string }
  | { kind: 'star' }
  | { kind: 'one' }
  | { kind: 'class'; negate: boolean; ranges: Array<[string, string]> };
type Segment = { globstar: true } | { globstar: false; tokens: Token[] };

const MAX_ALTERNATIVES = 64;

export function compileGlob(pattern: string): (path: string) => boolean {
  const patterns = expandBraces(pattern).map((p) =>
    p
      .split('/')
      .filter((s, i, all) => s !== '' || i === all.length - 1)
      .map(parseSegment),
  );
  return (path) => {
    const parts = path.split('/');
    return patterns.some((segs) => matchSegments(segs, parts));
  };
}

function expandBraces(p: string): string[] {
  const open = p.indexOf('{');
  if (open < 0) return [p];
  let depth = 0;
  for (let i = open; i < p.length; i++) {
    if (p[i] === '{') depth++;
    else if (p[i] === '}' && --depth === 0) {
      const inner = splitTopLevel(p.slice(open + 1, i));
      if (inner.length < 2) return [p];
      const out: string[] = [];
      for (const alt of inner) {
        for (const rest of expandBraces(p.slice(0, open) + alt + p.slice(i + 1))) {
          out.push(rest);
          if (out.length >= MAX_ALTERNATIVES) return out;
        }
      }
      return out;
    }
  }
  return [p];
}

function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '{') depth++;
    else if (s[i] === '}') depth--;
    else if (s[i] === ',' && depth === 0) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

function parseSegment(seg: string): Segment {
  if (seg === '**') return { globstar: true };
  const tokens: Token[] = [];
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === '\\' && i + 1 < seg.length) tokens.push({ kind: 'lit', ch: seg[++i]! });
    else if (c === '*') {
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' }); // ** inside a segment is one *
    } else if (c === '?') tokens.push({ kind: 'one' });
    else if (c === '[') {
      const close = seg.indexOf(']', i + 2);
      if (close < 0) {
        tokens.push({ kind: 'lit', ch: c });
        continue;
      }
      let body = seg.slice(i + 1, close);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      const ranges: Array<[string, string]> = [];
      for (let j = 0; j < body.length; j++) {
        if (body[j + 1] === '-' && j + 2 < body.length) {
          ranges.push([body[j]!, body[j + 2]!]);
          j += 2;
        } else ranges.push([body[j]!, body[j]!]);
      }
      tokens.push({ kind: 'class', negate, ranges });
      i = close;
    } else tokens.push({ kind: 'lit', ch: c });
  }
  return { globstar: false, tokens };
}

/** Classic wildcard DP over one path segment: O(name × tokens). */
function matchSegment(tokens: Token[], name: string): boolean {
  let prev = new Array<boolean>(name.length + 1).fill(false);
  prev[0] = true;
  for (const t of tokens) {
    const cur = new Array<boolean>(name.length + 1).fill(false);
    if (t.kind === 'star') {
      let seen = false;
      for (let j = 0; j <= name.length; j++) {
        seen ||= prev[j]!;
        cur[j] = seen;
      }
    } else {
      for (let j = 1; j <= name.length; j++) if (prev[j - 1] && accepts(t, name[j - 1]!)) cur[j] = true;
    }
    prev = cur;
  }
  return prev[name.length]!;
}

function accepts(t: Exclude<Token, { kind: 'star' }>, ch: string): boolean {
  if (t.kind === 'lit') return t.ch === ch;
  if (t.kind === 'one') return true;
  const inside = t.ranges.some(([a, b]) => ch >= a && ch <= b);
  return t.negate ? !inside : inside;
}

/** Segments against path parts, `**` spanning any number of parts: O(segments × parts) states. */
function matchSegments(segs: Segment[], parts: string[]): boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (parts.length + 1) + j;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    let result: boolean;
    if (i === segs.length) result = j === parts.length;
    else {
      const s = segs[i]!;
      if (s.globstar) result = go(i + 1, j) || (j < parts.length && go(i, j + 1));
      else result = j < parts.length && matchSegment(s.tokens, parts[j]!) && go(i + 1, j + 1);
    }
    memo.set(key, result);
    return result;
  };
  return go(0, 0);
}
