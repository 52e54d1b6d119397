import { z } from 'zod';
import { defineTool } from '../tool';
import { sandboxResult } from './common';

export const gitStatus = defineTool({
  name: 'git_status',
  description: 'Show the working tree status of the workspace repository (git status, porcelain format with the branch).',
  input: z.strictObject({}),
  sideEffect: 'read',
  isReadOnly: () => true,
  plan: () => ({ executor: 'sandbox', primitive: 'exec', input: { command: 'git status --porcelain=v1 --branch --untracked-files=all' }, timeoutMs: 30_000 }),
  observe(_input, raw) {
    const r = sandboxResult(raw);
    if (r.status !== 'ok') return { ok: false, text: `git status failed (exit ${r.exitCode ?? r.status}): ${r.output.trim()}`, external: true };
    return { ok: true, text: r.output.trim() === '' ? 'clean' : r.output, external: true };
  },
});
