import { z } from 'zod';
import { MAX_WRITE_BYTES } from '@gatehouse/shared';
import { defineTool, semanticError } from '../tool';
import { PATH_HINTS, PathField, expectReal, failure, pathRef, sandboxResult, workspaceKey } from './common';

export const writeFile = defineTool({
  name: 'write_file',
  description:
    'Create a file, or replace an existing file entirely. ' +
    'An existing file must have been read in this run and be unchanged since; ' +
    'prefer edit_file for changes to existing files.',
  input: z.strictObject({
    path: PathField.describe('file path, relative to the workspace root'),
    content: z.string().max(MAX_WRITE_BYTES).describe('the complete new content'),
  }),
  sideEffect: 'write',
  isReadOnly: () => false,
  workspacePaths: (input) => pathRef(input.path),
  async validate(input, ctx) {
    const key = workspaceKey(input.path);
    const now = await ctx.peek(input.path);
    if (!now.exists) return [];
    if (now.isDirectory) return [semanticError('path', 'is_directory', `${key} is a directory`)];
    const known = ctx.state.fileHashes[key];
    if (!known)
      return [
        semanticError(
          'path',
          'must_read_first',
          `${key} exists and has not been read in this run: read_file it first, or use a new path`,
        ),
      ];
    if (now.sha256 !== known)
      return [
        semanticError(
          'path',
          'stale',
          `${key} changed since this run last read it: read_file it again before replacing it`,
        ),
      ];
    return [];
  },
  plan(input, ctx) {
    const known = ctx.state.fileHashes[workspaceKey(input.path)];
    const primitiveInput = {
      path: input.path,
      content: input.content,
      expectedSha256: known ?? null,
      ...expectReal(ctx, input.path),
    };
    return { executor: 'sandbox', primitive: 'write_file', input: primitiveInput, timeoutMs: 30_000 };
  },
  observe(input, raw) {
    const r = sandboxResult(raw);
    if (r.status !== 'ok' || r.data?.kind !== 'write_file') {
      return failure(r, {
        ...PATH_HINTS,
        exists: 'the file appeared meanwhile: read_file it first',
        hash_mismatch: 'the file changed meanwhile: read_file it again',
      });
    }
    const key = workspaceKey(input.path);
    return {
      ok: true,
      text:
        `${r.data.created ? 'created' : 'replaced'} ${key} ` +
        `(${Buffer.byteLength(input.content)} bytes, sha256 ${r.data.sha256.slice(0, 12)})`,
      fileHashes: { [key]: r.data.sha256 },
      external: false,
    };
  },
});
