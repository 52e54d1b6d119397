import type { z } from 'zod';
import { closeMatches } from './close-match';

/**
 * One thing wrong with a file a person wrote (the project config, a policy), where it is, and what
 * was expected. Files are read whole and every problem is listed at once, so one edit fixes them all.
 */
export interface FileProblem {
  /** The file (absolute), or `--image` and the like for a flag. */
  file: string;
  /** JSON path in the file, `limits.memoryMb` or `egress.setup[2]`; empty for the file as a whole. */
  path: string;
  message: string;
  line?: number;
  column?: number;
}

export function problemText(p: FileProblem): string {
  const where = p.line === undefined ? p.file : `${p.file}:${p.line}:${p.column ?? 1}`;
  return p.path ? `${where}: ${p.path}: ${p.message}` : `${where}: ${p.message}`;
}

export function jsonPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}

/**
 * zod's issues as problems a person can act on: each with its JSON path, what was expected and
 * what the file has there; an unknown key with the known ones closest to it.
 */
export function problemsFromIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  schema: z.ZodType,
  file: string,
  prefix: readonly PropertyKey[] = [],
): FileProblem[] {
  const out: FileProblem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = keysAt(schema, issue.path);
      for (const key of issue.keys) {
        const close = closeMatches(key, known);
        const hint = close.length ? `did you mean ${close.slice(0, 2).join(' or ')}?` : `known: ${known.join(', ')}`;
        out.push({ file, path: jsonPath([...prefix, ...issue.path, key]), message: `unknown key; ${hint}` });
      }
      continue;
    }
    // A record's bad key: what the key should look like is in the key's own issue.
    if (issue.code === 'invalid_key') {
      const why = issue.issues[0]?.message ?? issue.message;
      out.push({ file, path: jsonPath([...prefix, ...issue.path]), message: why });
      continue;
    }
    const value = valueAt(input, issue.path);
    const got = value === undefined ? '' : `, got ${shown(value)}`;
    const path = jsonPath([...prefix, ...issue.path]);
    out.push({ file, path, message: `${expectation(issue)}${got}${closestValue(issue, value)}` });
  }
  return out;
}

/** What was expected where an issue is: one of the allowed values, one of a union's types, or zod's words. */
function expectation(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_value' && issue.values.length > 1)
    return `expected one of ${issue.values.map(String).join(', ')}`;
  if (issue.code === 'invalid_union' && issue.errors.length > 0 && issue.message === 'Invalid input') {
    // A value none of the union's shapes take at all: say which types would do.
    const types = issue.errors.flatMap((option) =>
      option.flatMap((i) => (i.code === 'invalid_type' && i.path.length === 0 ? [String(i.expected)] : [])),
    );
    if (types.length === issue.errors.length) return `expected ${[...new Set(types)].map(article).join(' or ')}`;
  }
  return plain(issue.message);
}

/** `; did you mean sandboxed-auto?` for a mistyped value of a fixed set. */
function closestValue(issue: z.core.$ZodIssue, value: unknown): string {
  if (issue.code !== 'invalid_value' || typeof value !== 'string') return '';
  const close = closeMatches(value, issue.values.map(String));
  return close.length ? `; did you mean ${close[0]}?` : '';
}

function article(type: string): string {
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/** zod's default wording ("Invalid input: expected string, received number") cut to the expectation. */
function plain(message: string): string {
  const m = /^Invalid input: expected (\w+)/.exec(message);
  if (m) return `expected ${article(m[1]!)}`;
  return message.replace(/^Too small: /, '').replace(/^Too big: /, '');
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const p of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[p];
  }
  return node;
}

type Def = {
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  options?: z.ZodType[];
  /** A record's values (the config's MCP servers by name). */
  valueType?: z.ZodType;
};

/** The keys an object in the schema has at a path (optional and default wrappers looked through). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const def = (s: z.ZodType | undefined): Def | undefined => {
    let d = s?._zod.def as Def | undefined;
    while (d?.innerType) d = d.innerType._zod.def as Def;
    // A union (a rule is a string or an object): the option that is an object has the keys.
    const withShape = d?.options?.map((o) => def(o)).find((o) => o?.shape);
    return withShape ?? d;
  };
  let node: Def | undefined = def(schema);
  for (const p of path)
    node = def(typeof p === 'number' ? node?.element : (node?.shape?.[String(p)] ?? node?.valueType));
  return Object.keys(node?.shape ?? {});
}
