import { z } from 'zod';
import type { InvocationResult } from '@gatehouse/shared';
import type { Observed, RawResult, ToolContext } from '../tool';
import type { WorkspacePathRef } from '../workspace-paths';

export const PathField = z.string().min(1).max(4096);

/** The one path field of most path tools, resolved for the policy. */
export function pathRef(p: string | undefined): WorkspacePathRef[] {
  return p === undefined ? [] : [{ field: 'path', path: p, resolve: true }];
}

/** The resolved path the policy decided on, for the primitive to insist on (absent: no check). */
export function expectReal(ctx: ToolContext, p: string | undefined): { expectReal?: string } {
  const real = p === undefined ? undefined : ctx.realPath?.(p);
  return real === undefined ? {} : { expectReal: real };
}

/** Normalised workspace paths live in shared: the policy matches rules on the same key. */
export { workspaceKey } from '@gatehouse/shared';

export function sandboxResult(raw: RawResult): InvocationResult {
  if (raw.executor !== 'sandbox') throw new Error('expected a sandbox result');
  return raw.result;
}

/** The failure text the model sees for a primitive that did not succeed, with what to do about it. */
export function failure(result: InvocationResult, hints: Partial<Record<string, string>> = {}): Observed {
  const code = result.error?.code ?? result.status;
  const hint = hints[code];
  const text = [`error (${code}): ${result.error?.message ?? result.status}`, hint ? `what to do: ${hint}` : '']
    .filter(Boolean)
    .join('\n');
  return { ok: false, text, external: false };
}

export const PATH_HINTS: Partial<Record<string, string>> = {
  path_outside_workspace: 'use a path inside the workspace (relative paths are relative to its root)',
  path_changed: 'a symbolic link on the path changed after the policy decided; check it, then propose the call again',
  not_found: 'check the path with list_files or glob',
  is_directory: 'it is a directory: use list_files {"path": …} or glob {"pattern": …}',
  not_a_directory: 'that path is a file: use read_file',
  invalid_path: 'use a plain relative path without special characters',
  binary_file: 'the file is binary; inspect it with bash (e.g. `file`, `xxd | head`)',
  too_large: 'read part of it with bash (e.g. `head`, `sed -n`)',
};
