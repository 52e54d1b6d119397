import type { z } from 'zod';
import { closeMatches } from './close-match';

/** One thing wrong with a config file, where it is, and what was expected. */
export interface ConfigProblem {
  /** The file (absolute), or `--image` and the like for a flag. */
  file: string;
  /** JSON path in the file, `limits.memoryMb` or `egress.setup[2]`; empty for the file as a whole. */
  path: string;
  message: string;
  line?: number;
  column?: number;
}

export function problemText(p: ConfigProblem): string {
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
): ConfigProblem[] {
  const out: ConfigProblem[] = [];
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
    out.push({ file, path: jsonPath([...prefix, ...issue.path]), message: `${plain(issue.message)}${got}` });
  }
  return out;
}

/** zod's default wording ("Invalid input: expected string, received number") cut to the expectation. */
function plain(message: string): string {
  const m = /^Invalid input: expected (\w+)/.exec(message);
  if (m) return `expected ${/^[aeiou]/.test(m[1]!) ? 'an' : 'a'} ${m[1]}`;
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

type Def = { innerType?: z.ZodType; element?: z.ZodType; shape?: Record<string, z.ZodType> };

/** The keys an object in the schema has at a path (optional and default wrappers looked through). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const def = (s: z.ZodType | undefined): Def | undefined => {
    let d = s?._zod.def as Def | undefined;
    while (d?.innerType) d = d.innerType._zod.def as Def;
    return d;
  };
  let node: Def | undefined = def(schema);
  for (const p of path) node = def(typeof p === 'number' ? node?.element : node?.shape?.[String(p)]);
  return Object.keys(node?.shape ?? {});
}
