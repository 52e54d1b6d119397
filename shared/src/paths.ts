import path from 'node:path';

/** Where the repository copy lives inside every sandbox. */
export const WORKSPACE_ROOT = '/workspace';

/**
 * The key a workspace file is known by — in run state and in policy rules: workspace-relative and
 * normalised, so `./src/../src/a.ts`, `src/a.ts` and `/workspace/src/a.ts` are one file. Paths that
 * leave the workspace are returned as given (the sandbox refuses them; no path rule matches them).
 */
export function workspaceKey(p: string): string {
  const abs = path.posix.resolve(WORKSPACE_ROOT, p);
  if (abs === WORKSPACE_ROOT) return '.';
  return abs.startsWith(`${WORKSPACE_ROOT}/`) ? abs.slice(WORKSPACE_ROOT.length + 1) : p;
}
