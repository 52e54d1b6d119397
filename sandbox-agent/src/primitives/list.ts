import type { InvocationOf, ListEntry } from '@gatehouse/shared';
import { PrimitiveError } from '../errors';
import { statOrThrow } from './file-io';
import { ok, type Outcome, type PrimitiveContext } from './context';
import { walk } from './walk';

const DEFAULT_LIMIT = 1000;

export async function list(input: InvocationOf<'list'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const target = await ctx.ws.resolveExpecting(input.path ?? '.', input.expectReal);
  const st = statOrThrow(target);
  if (!st.isDirectory())
    throw new PrimitiveError(
      'not_a_directory',
      `${target.rel} is not a directory; read it instead`,
      'rejected',
      target.rel,
    );

  const limit = input.limit ?? DEFAULT_LIMIT;
  const entries: ListEntry[] = [];
  let used = 0;
  let truncated = false;
  const started = Date.now();
  for await (const entry of walk(ctx.ws.root, target.real, {
    recursive: input.recursive ?? false,
    skipDirs: new Set(['.git']),
    deadline: started + ctx.timeoutMs,
    signal: ctx.signal,
  })) {
    used += Buffer.byteLength(entry.path) + 32;
    if (entries.length >= limit || used > ctx.outputCap) {
      truncated = true;
      break;
    }
    entries.push(entry);
  }
  const output = entries
    .map((e) => (e.type === 'dir' ? `${e.path}/` : e.type === 'symlink' ? `${e.path}@` : e.path))
    .join('\n');
  return { ...ok(output, { kind: 'list', entries }), truncated };
}
