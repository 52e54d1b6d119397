import type { InvocationOf } from '@gatehouse/shared';
import { PrimitiveError } from '../errors';
import { hashOf, readRegularFile } from './file-io';
import { ok, type Outcome, type PrimitiveContext } from './context';

export async function readFile(input: InvocationOf<'read_file'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const target = await ctx.ws.resolveExpecting(input.path, input.expectReal);
  const bytes = await readRegularFile(target);
  const sha256 = hashOf(bytes);
  if (bytes.subarray(0, 8192).includes(0)) {
    throw new PrimitiveError(
      'binary_file',
      `${target.rel} looks binary (${bytes.length} bytes, sha256 ${sha256})`,
      'failed',
      target.rel,
    );
  }
  const text = bytes.toString('utf8');
  const lines = text.length === 0 ? [] : text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const startLine = input.offset ?? 1;
  const wanted = lines.slice(startLine - 1, input.limit === undefined ? undefined : startLine - 1 + input.limit);

  // Whole lines only, up to the output cap: a cut line would be misread as the file's content.
  const kept: string[] = [];
  let used = 0;
  for (const line of wanted) {
    const cost = Buffer.byteLength(line) + 1;
    if (used + cost > ctx.outputCap) break;
    kept.push(line);
    used += cost;
  }
  const output = kept.join('\n') + (kept.length > 0 ? '\n' : '');
  return {
    ...ok(output, {
      kind: 'read_file',
      sha256,
      totalBytes: bytes.length,
      totalLines: lines.length,
      startLine,
      endLine: startLine - 1 + kept.length,
    }),
    bytes: wanted.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0),
    truncated: kept.length < wanted.length,
  };
}
