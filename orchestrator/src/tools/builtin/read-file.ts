import { z } from 'zod';
import { defineTool } from '../tool';
import { PATH_HINTS, PathField, expectReal, failure, pathRef, sandboxResult, workspaceKey } from './common';

export const readFile = defineTool({
  name: 'read_file',
  description:
    'Read a text file in the workspace. Returns numbered lines. ' +
    'offset is the 1-based first line, limit the number of lines (capped by the runtime). ' +
    'Reading a file records its content hash: edit_file and write_file require it.',
  input: z.strictObject({
    path: PathField.describe('file path, relative to the workspace root'),
    offset: z.number().int().positive().optional().describe('1-based line to start at'),
    limit: z.number().int().positive().optional().describe('number of lines to return'),
  }),
  sideEffect: 'read',
  isReadOnly: () => true,
  workspacePaths: (input) => pathRef(input.path),
  plan: (input, ctx) => ({
    executor: 'sandbox',
    primitive: 'read_file',
    input: {
      path: input.path,
      ...(input.offset ? { offset: input.offset } : {}),
      limit: Math.min(input.limit ?? ctx.limits.maxReadLines, ctx.limits.maxReadLines),
      ...expectReal(ctx, input.path),
    },
    timeoutMs: 30_000,
  }),
  observe(input, raw) {
    const r = sandboxResult(raw);
    if (r.status !== 'ok' || r.data?.kind !== 'read_file') return failure(r, PATH_HINTS);
    const d = r.data;
    const lines = r.output === '' ? [] : r.output.replace(/\n$/, '').split('\n');
    const numbered = lines.map((l, i) => `${String(d.startLine + i).padStart(6)}\t${l}`).join('\n');
    const key = workspaceKey(input.path);
    const range = d.totalLines === 0 ? 'empty file' : `lines ${d.startLine}-${d.endLine} of ${d.totalLines}`;
    const more =
      d.endLine < d.totalLines
        ? `\n[${d.totalLines - d.endLine} more lines: ` +
          `read_file {"path": ${JSON.stringify(input.path)}, "offset": ${d.endLine + 1}}]`
        : '';
    return {
      ok: true,
      text: `${key} (${range}, sha256 ${d.sha256.slice(0, 12)})\n${numbered}${more}`,
      fileHashes: { [key]: d.sha256 },
      external: true,
    };
  },
});
