import { z } from 'zod';
import { defineTool } from '../tool';
import { PATH_HINTS, PathField, expectReal, failure, pathRef, sandboxResult } from './common';

export const grep = defineTool({
  name: 'grep',
  description:
    'Search file contents with a POSIX extended regular expression (grep -E). Returns path:line:text. ' +
    '.git and node_modules are skipped; binary files are ignored.',
  input: z.strictObject({
    pattern: z.string().min(1).max(4096).describe('extended regular expression'),
    path: PathField.optional().describe('file or directory to search (default: the workspace root)'),
  }),
  sideEffect: 'read',
  isReadOnly: () => true,
  workspacePaths: (input) => pathRef(input.path),
  plan: (input, ctx) => ({
    executor: 'sandbox',
    primitive: 'grep',
    input: {
      pattern: input.pattern,
      ...(input.path ? { path: input.path } : {}),
      limit: 500,
      ...expectReal(ctx, input.path),
    },
    timeoutMs: 60_000,
  }),
  observe(input, raw) {
    const r = sandboxResult(raw);
    if (r.status !== 'ok' || r.data?.kind !== 'grep')
      return failure(r, { ...PATH_HINTS, io_error: 'check the pattern: it is grep -E syntax' });
    if (r.data.matches.length === 0) return { ok: true, text: `no matches for ${input.pattern}`, external: false };
    const more = r.truncated ? '\n[cut at 500 matches: narrow the pattern or the path]' : '';
    return { ok: true, text: `${r.data.matches.length} matches\n${r.output}${more}`, external: true };
  },
});
