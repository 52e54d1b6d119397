import path from 'node:path';
import { actionHash, WORKSPACE_ROOT, workspaceKey, type PathResolution, type ValidationError } from '@gatehouse/shared';
import type { SandboxPort } from './ports';

/** A workspace path a call names: which input field holds it, and whether its realpath matters. */
export interface WorkspacePathRef {
  field: string;
  path: string;
  /**
   * Whether the policy also decides on where the path really leads. False where the primitive never
   * follows a link at that path (glob walks without following links).
   */
  resolve: boolean;
}

/** A requested path, its workspace key, and where the sandbox says it leads. */
export interface ResolvedRef extends PathResolution {
  field: string;
  /** The requested path as the policy keys it (`./src/../a` is `a`). */
  key: string;
}

/**
 * Whether a path leaves the workspace lexically: absolute outside /workspace, or climbing out with
 * `..` once normalised (the same normalisation workspaceKey and the policy's rules use).
 */
export function escapesWorkspace(p: string): boolean {
  const abs = path.posix.resolve(WORKSPACE_ROOT, p);
  return abs !== WORKSPACE_ROOT && !abs.startsWith(`${WORKSPACE_ROOT}/`);
}

/** One validation error per path that leaves the workspace as written; nothing is asked of the sandbox. */
export function outsideErrors(refs: readonly WorkspacePathRef[]): ValidationError[] {
  return refs
    .filter((r) => escapesWorkspace(r.path))
    .map((r) => ({
      path: r.field,
      code: 'path_outside_workspace',
      message:
        `${quote(r.path)} is outside the workspace; use a path inside ${WORKSPACE_ROOT} ` +
        '(relative paths are relative to it)',
    }));
}

/**
 * Asks the sandbox where the paths really lead, in one round trip. The `resolve` primitive only
 * reads link targets, so the runtime authorises it itself, as it does the validation peek.
 */
export async function resolveRefs(sandbox: SandboxPort, refs: readonly WorkspacePathRef[]): Promise<ResolvedRef[]> {
  const input = { paths: refs.map((r) => r.path) };
  const r = await sandbox.invoke('resolve', input, {
    approval: { id: 'runtime:validation-resolve', actionHash: actionHash({ name: 'resolve', input }), by: 'runtime' },
    timeoutMs: 30_000,
    outputCap: 64 * 1024,
  });
  if (r.status !== 'ok' || r.data?.kind !== 'resolve' || r.data.paths.length !== refs.length) {
    throw new Error(r.error?.message ?? `the sandbox could not resolve the paths (${r.status})`);
  }
  const answers = r.data.paths;
  return refs.map((ref, i) => ({
    ...(answers[i] as PathResolution),
    path: ref.path,
    field: ref.field,
    key: workspaceKey(ref.path),
  }));
}

/** Paths that resolve outside the workspace, or cannot be resolved, fail validation. */
export function resolutionErrors(resolved: readonly ResolvedRef[]): ValidationError[] {
  const errors: ValidationError[] = [];
  for (const r of resolved) {
    if (r.error !== undefined || r.real === undefined) {
      const message = `${quote(r.path)} cannot be resolved: ${r.error ?? 'unknown reason'}`;
      errors.push({ path: r.field, code: 'invalid_path', message });
    } else if (r.outside) {
      const via = r.dangling ? ' through a dangling symbolic link' : '';
      errors.push({
        path: r.field,
        code: 'path_outside_workspace',
        message: `${quote(r.path)} resolves to ${r.real}${via}, outside the workspace; use a path inside it`,
      });
    }
  }
  return errors;
}

/** Paths that lead somewhere other than they say: the policy decides on these a second time. */
export function redirected(resolved: readonly ResolvedRef[]): Array<ResolvedRef & { real: string }> {
  return resolved.filter(
    (r): r is ResolvedRef & { real: string } => r.real !== undefined && !r.outside && r.real !== r.key,
  );
}

/** What the log keeps of a resolution (the event schema's shape). */
export function resolutionRecords(resolved: readonly ResolvedRef[]): PathResolution[] {
  return resolved.map(({ path: p, real, exists, outside, dangling, error }) => ({
    path: p,
    exists,
    outside,
    ...(real !== undefined ? { real } : {}),
    ...(dangling ? { dangling } : {}),
    ...(error !== undefined ? { error } : {}),
  }));
}

function quote(p: string): string {
  const clean = p.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

/**
 * The path stage of validation: every path must stay inside the workspace as written, then (one
 * round trip) where each leads is asked of the sandbox, and a path that leads outside fails too.
 * What it resolved is returned for the policy and the log.
 */
export async function checkWorkspacePaths(
  sandbox: SandboxPort,
  refs: readonly WorkspacePathRef[],
): Promise<{ errors: ValidationError[]; resolved: ResolvedRef[] }> {
  const outside = outsideErrors(refs);
  if (outside.length > 0) return { errors: outside, resolved: [] };
  const wanted = refs.filter((r) => r.resolve);
  if (wanted.length === 0) return { errors: [], resolved: [] };
  let resolved: ResolvedRef[];
  try {
    resolved = await resolveRefs(sandbox, wanted);
  } catch (e) {
    const message = `could not check where the path leads in the workspace: ${(e as Error).message}`;
    return { errors: [{ path: '', code: 'validation_unavailable', message }], resolved: [] };
  }
  return { errors: resolutionErrors(resolved), resolved };
}
