import path from 'node:path';
import type { InvocationOf } from '@gatehouse/shared';
import { PrimitiveError } from '../errors';
import { statOrThrow } from './file-io';
import { ok, type Outcome, type PrimitiveContext } from './context';
import { compileGlob } from './glob-match';
import { walk } from './walk';

const DEFAULT_LIMIT = 1000;

/**
 * Matches workspace paths (relative to `path`, default the root) against a glob. `.git` is never
 * searched, and `node_modules` only when the pattern names it, so `**\/*.ts` stays fast.
 */
export async function glob(input: InvocationOf<'glob'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const base = await ctx.ws.resolve(input.path ?? '.');
  // Without this, a base that does not exist (or is a file) walked as empty and came back as
  // `ok` with no matches: "nothing matches" when the truth is "you looked in the wrong place".
  const st = statOrThrow(base);
  if (!st.isDirectory())
    throw new PrimitiveError('not_a_directory', `${base.rel} is not a directory`, 'rejected', base.rel);
  const isMatch = compileGlob(input.pattern);
  const skipDirs = new Set(['.git', ...(input.pattern.includes('node_modules') ? [] : ['node_modules'])]);
  const limit = input.limit ?? DEFAULT_LIMIT;
  const paths: string[] = [];
  let used = 0;
  let truncated = false;
  for await (const entry of walk(ctx.ws.root, base.real, {
    recursive: true,
    skipDirs,
    deadline: Date.now() + ctx.timeoutMs,
    signal: ctx.signal,
  })) {
    const relToBase = path.relative(path.relative(ctx.ws.root, base.real), entry.path);
    if (!isMatch(relToBase)) continue;
    used += Buffer.byteLength(entry.path) + 1;
    if (paths.length >= limit || used > ctx.outputCap) {
      truncated = true;
      break;
    }
    paths.push(entry.path);
  }
  return { ...ok(paths.join('\n'), { kind: 'glob', paths }), truncated };
}
