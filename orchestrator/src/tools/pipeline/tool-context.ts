import { actionHash, MAX_OUTPUT_CAP } from '@gatehouse/shared';
import { realPathLookup } from '../path-decision';
import type { PeekResult, ToolContext } from '../tool';
import type { ResolvedRef } from '../workspace-paths';
import type { PipelineDeps } from './types';

/** What a tool's validate, plan and observe see: run state, limits, a read-only peek, where its paths led. */
export function toolContext(
  deps: PipelineDeps,
  resolved: readonly ResolvedRef[] = [],
  actor: 'model' | 'runtime' = 'model',
): ToolContext {
  return {
    actor,
    state: deps.tracker.state,
    limits: deps.limits,
    peek: (p) => peek(deps, p),
    realPath: realPathLookup(resolved),
    ...(deps.agent ? { agent: deps.agent } : {}),
    ...(deps.memory ? { memory: deps.memory } : {}),
  };
}

/** A runtime read for semantic checks: full content and hash, never recorded as a tool call. */
async function peek(deps: PipelineDeps, path: string): Promise<PeekResult> {
  const input = { path };
  const r = await deps.sandbox.invoke('read_file', input, {
    approval: { id: 'runtime:validation-peek', actionHash: actionHash({ name: 'read_file', input }), by: 'runtime' },
    timeoutMs: 30_000,
    outputCap: MAX_OUTPUT_CAP,
  });
  if (r.status === 'ok' && r.data?.kind === 'read_file')
    return { exists: true, isDirectory: false, sha256: r.data.sha256, ...(r.truncated ? {} : { content: r.output }) };
  if (r.error?.code === 'not_found') return { exists: false };
  if (r.error?.code === 'is_directory') return { exists: true, isDirectory: true };
  if (r.error?.code === 'binary_file') return { exists: true, isDirectory: false };
  throw new Error(r.error?.message ?? r.status);
}
