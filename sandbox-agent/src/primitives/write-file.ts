import type { InvocationOf } from '@gatehouse/shared';
import { PrimitiveError } from '../errors';
import { hashOf, readRegularFile, writeAtomically } from './file-io';
import { ok, type Outcome, type PrimitiveContext } from './context';

export async function writeFile(input: InvocationOf<'write_file'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const target = await ctx.ws.resolveExpecting(input.path, input.expectReal);
  if (input.expectedSha256 !== undefined) {
    if (input.expectedSha256 === null) {
      if (target.exists)
        throw new PrimitiveError('exists', `${target.rel} already exists; read it first`, 'rejected', target.rel);
    } else {
      const current = target.exists ? hashOf(await readRegularFile(target)) : null;
      if (current !== input.expectedSha256) {
        throw new PrimitiveError(
          'hash_mismatch',
          `${target.rel} changed since it was read; read it again`,
          'rejected',
          target.rel,
        );
      }
    }
  }
  await writeAtomically(target, input.content, ctx.user);
  const sha256 = hashOf(input.content);
  return ok(
    `wrote ${Buffer.byteLength(input.content)} bytes to ${target.rel}`,
    { kind: 'write_file', sha256, created: !target.exists },
    {
      filesChanged: [target.rel],
    },
  );
}
