import { z } from 'zod';
import { defineTool } from '../tool';
import { failure, sandboxResult } from './common';

export const glob = defineTool({
  name: 'glob',
  description:
    'Find workspace files whose path matches a glob such as "src/**/*.ts". ' +
    '.git is never searched; node_modules only when the pattern names it.',
  input: z.strictObject({ pattern: z.string().min(1).max(1024).describe('glob, relative to the workspace root') }),
  sideEffect: 'read',
  isReadOnly: () => true,
  // Checked as a path, the pattern stays inside exactly when its base (the part before the first
  // wildcard) does and no `..` after a wildcard climbs out. The walk never follows links, so the
  // policy need not decide on a resolved form.
  workspacePaths: (input) => [{ field: 'pattern', path: input.pattern, resolve: false }],
  plan: (input) => ({
    executor: 'sandbox',
    primitive: 'glob',
    input: { pattern: input.pattern, limit: 1000 },
    timeoutMs: 30_000,
  }),
  observe(input, raw) {
    const r = sandboxResult(raw);
    if (r.status !== 'ok' || r.data?.kind !== 'glob') return failure(r);
    if (r.data.paths.length === 0) return { ok: true, text: `no files match ${input.pattern}`, external: false };
    const more = r.truncated ? '\n[cut at 1000 paths: narrow the pattern]' : '';
    return {
      ok: true,
      text: `${r.data.paths.length} files match ${input.pattern}\n${r.output}${more}`,
      external: true,
    };
  },
});
