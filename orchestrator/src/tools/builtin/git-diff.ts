import { z } from 'zod';
import { SAFE_GIT, SAFE_GIT_ENV } from '@gatehouse/shared';
import { defineTool } from '../tool';
import { PathField, pathRef, sandboxResult } from './common';

export const gitDiff = defineTool({
  name: 'git_diff',
  description: 'Show unstaged changes in the workspace repository (git diff), for the whole tree or one path.',
  input: z.strictObject({ path: PathField.optional().describe('limit the diff to this path') }),
  sideEffect: 'read',
  isReadOnly: () => true,
  // git does not follow a symlink in a pathspec, but the policy still decides on where it leads.
  workspacePaths: (input) => pathRef(input.path),
  // The path travels in an environment variable, never spliced into the command line.
  plan: (input) => ({
    executor: 'sandbox',
    primitive: 'exec',
    input: {
      command: `git ${SAFE_GIT.join(' ')} diff --no-color --no-ext-diff --no-textconv -- "$GATEHOUSE_DIFF_PATH"`,
      env: { ...SAFE_GIT_ENV, GATEHOUSE_DIFF_PATH: input.path ?? '.' },
    },
    timeoutMs: 60_000,
  }),
  observe(input, raw) {
    const r = sandboxResult(raw);
    if (r.status !== 'ok')
      return {
        ok: false,
        text: `git diff failed (exit ${r.exitCode ?? r.status}): ${r.output.trim()}`,
        external: true,
      };
    return {
      ok: true,
      text: r.output.trim() === '' ? `no unstaged changes${input.path ? ` in ${input.path}` : ''}` : r.output,
      external: true,
    };
  },
});
