import { countOccurrences, type InvocationOf } from '@gatehouse/shared';
import { PrimitiveError } from '../errors';
import { hashOf, readRegularFile, writeAtomically } from './file-io';
import { ok, type Outcome, type PrimitiveContext } from './context';

export async function editFile(input: InvocationOf<'edit_file'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const target = await ctx.ws.resolveExpecting(input.path, input.expectReal);
  const before = await readRegularFile(target);
  const previousSha256 = hashOf(before);
  if (previousSha256 !== input.expectedSha256) {
    throw new PrimitiveError(
      'hash_mismatch',
      `${target.rel} changed since it was read; read it again before editing`,
      'rejected',
      target.rel,
    );
  }
  const text = before.toString('utf8');
  const first = text.indexOf(input.oldText);
  if (first < 0)
    throw new PrimitiveError('old_text_not_found', `oldText does not occur in ${target.rel}`, 'rejected', target.rel);
  const count = countOccurrences(text, input.oldText);
  if (count > 1) {
    throw new PrimitiveError(
      'old_text_not_unique',
      `oldText occurs ${count} times in ${target.rel}; include more context to make it unique`,
      'rejected',
      target.rel,
    );
  }
  const after = text.slice(0, first) + input.newText + text.slice(first + input.oldText.length);
  await writeAtomically(target, after, ctx.user);
  const sha256 = hashOf(after);
  return ok(`edited ${target.rel}`, { kind: 'edit_file', sha256, previousSha256 }, { filesChanged: [target.rel] });
}
