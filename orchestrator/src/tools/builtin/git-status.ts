import { z } from 'zod';
import { SAFE_GIT, SAFE_GIT_ENV } from '@gatehouse/shared';
import { defineTool } from '../tool';
import { sandboxResult } from './common';

export const gitStatus = defineTool({
  name: 'git_status',
  description:
    'Show the working tree status of the workspace repository (git status, porcelain format with the branch).',
  input: z.strictObject({}),
  sideEffect: 'read',
  isReadOnly: () => true,
  // Read-only tools may run in read-only mode: git must not run programs the repository configures
  // (SAFE_GIT_ENV carries the overrides and puts gatehouse's git wrapper first on PATH).
  plan: () => ({
    executor: 'sandbox',
    primitive: 'exec',
    input: {
      command: `git ${SAFE_GIT.join(' ')} status --porcelain=v1 --branch --untracked-files=all`,
      env: SAFE_GIT_ENV,
    },
    timeoutMs: 30_000,
  }),
  observe(_input, raw) {
    const r = sandboxResult(raw);
    if (r.status !== 'ok')
      return {
        ok: false,
        text: `git status failed (exit ${r.exitCode ?? r.status}): ${r.output.trim()}`,
        external: true,
      };
    return { ok: true, text: r.output.trim() === '' ? 'clean' : r.output, external: true };
  },
});
