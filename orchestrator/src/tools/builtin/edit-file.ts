import { z } from 'zod';
import { countOccurrences, MAX_WRITE_BYTES } from '@gatehouse/shared';
import { defineTool, semanticError } from '../tool';
import { PATH_HINTS, PathField, expectReal, failure, pathRef, sandboxResult, workspaceKey } from './common';

export const editFile = defineTool({
  name: 'edit_file',
  description:
    'Replace one exact occurrence of oldText with newText in a file. ' +
    'The file must have been read in this run and be unchanged since; ' +
    'oldText must occur exactly once (include surrounding lines to make it unique).',
  input: z.strictObject({
    path: PathField.describe('file path, relative to the workspace root'),
    oldText: z.string().min(1).describe('exact text to replace, including whitespace'),
    newText: z.string().max(MAX_WRITE_BYTES).describe('replacement text'),
  }),
  sideEffect: 'write',
  isReadOnly: () => false,
  workspacePaths: (input) => pathRef(input.path),
  async validate(input, ctx) {
    const key = workspaceKey(input.path);
    const known = ctx.state.fileHashes[key];
    if (!known)
      return [semanticError('path', 'must_read_first', `${key} has not been read in this run: read_file it first`)];
    const now = await ctx.peek(input.path);
    if (!now.exists) return [semanticError('path', 'not_found', `${key} no longer exists`)];
    if (now.isDirectory) return [semanticError('path', 'is_directory', `${key} is a directory`)];
    if (now.sha256 !== known)
      return [
        semanticError('path', 'stale', `${key} changed since this run last read it: read_file it again, then edit`),
      ];
    if (now.content !== undefined) {
      const count = countOccurrences(now.content, input.oldText);
      if (count === 0)
        return [
          semanticError(
            'oldText',
            'old_text_not_found',
            `oldText does not occur in ${key}: copy it exactly from read_file output, without the line numbers`,
          ),
        ];
      if (count > 1)
        return [
          semanticError(
            'oldText',
            'old_text_not_unique',
            `oldText occurs ${count} times in ${key}: include more surrounding lines so it occurs once`,
          ),
        ];
    }
    return [];
  },
  plan(input, ctx) {
    const known = ctx.state.fileHashes[workspaceKey(input.path)] ?? '';
    const primitiveInput = {
      path: input.path,
      oldText: input.oldText,
      newText: input.newText,
      expectedSha256: known,
      ...expectReal(ctx, input.path),
    };
    return { executor: 'sandbox', primitive: 'edit_file', input: primitiveInput, timeoutMs: 30_000 };
  },
  observe(input, raw) {
    const r = sandboxResult(raw);
    if (r.status !== 'ok' || r.data?.kind !== 'edit_file') {
      return failure(r, {
        ...PATH_HINTS,
        hash_mismatch: 'the file changed meanwhile: read_file it again',
        old_text_not_found: 'copy oldText exactly from read_file',
        old_text_not_unique: 'include more surrounding lines',
      });
    }
    const key = workspaceKey(input.path);
    const delta = input.newText.split('\n').length - input.oldText.split('\n').length;
    return {
      ok: true,
      text:
        `edited ${key}: replaced 1 occurrence ` +
        `(${delta >= 0 ? '+' : ''}${delta} lines, sha256 ${r.data.sha256.slice(0, 12)})`,
      fileHashes: { [key]: r.data.sha256 },
      external: false,
    };
  },
});
