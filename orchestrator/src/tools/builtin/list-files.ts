import { z } from 'zod';
import { defineTool } from '../tool';
import { PATH_HINTS, PathField, expectReal, failure, pathRef, sandboxResult } from './common';

export const listFiles = defineTool({
  name: 'list_files',
  description:
    'List the entries of a directory in the workspace (default: the root). ' +
    'Directories end with /, symbolic links with @.',
  input: z.strictObject({ path: PathField.optional().describe('directory, relative to the workspace root') }),
  sideEffect: 'read',
  isReadOnly: () => true,
  workspacePaths: (input) => pathRef(input.path),
  plan: (input, ctx) => ({
    executor: 'sandbox',
    primitive: 'list',
    input: { path: input.path ?? '.', limit: 1000, ...expectReal(ctx, input.path) },
    timeoutMs: 30_000,
  }),
  observe(input, raw) {
    const r = sandboxResult(raw);
    if (r.status !== 'ok' || r.data?.kind !== 'list') return failure(r, PATH_HINTS);
    const more = r.truncated ? '\n[listing cut at 1000 entries: list a subdirectory or use glob]' : '';
    return {
      ok: true,
      text: `${r.data.entries.length} entries in ${input.path ?? '.'}\n${r.output}${more}`,
      external: true,
    };
  },
});
