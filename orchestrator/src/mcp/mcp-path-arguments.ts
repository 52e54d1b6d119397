import path from 'node:path';
import { WORKSPACE_ROOT } from '@gatehouse/shared';
import { MCP_PATH_FIELDS, MCP_PATH_LIST_FIELD } from '../policy/mcp-names';
import type { WorkspacePathRef } from '../tools/workspace-paths';

/** An MCP call's arguments (mcp-tool.ts McpArguments). */
type McpArguments = Record<string, unknown>;

/**
 * Why a call's path arguments cannot be decided on, if they cannot: `path`, `source` and
 * `destination` must be strings and `paths` a list of strings. The policy's path rules read only
 * those (policy/mcp-names.ts); a server whose schema lets `path` be a list or an object would
 * otherwise take a path no rule saw (a deny on `secrets/**` missed by `{"path": ["secrets/k"]}`).
 */
export function pathArgumentProblem(input: McpArguments): string | undefined {
  for (const field of MCP_PATH_FIELDS)
    if (field in input && typeof input[field] !== 'string') return `\`${field}\` ${notDecidable('a string')}`;
  const list = input[MCP_PATH_LIST_FIELD];
  if (MCP_PATH_LIST_FIELD in input && !(Array.isArray(list) && list.every((v) => typeof v === 'string')))
    return `\`${MCP_PATH_LIST_FIELD}\` ${notDecidable('a list of strings')}`;
  return undefined;
}

function notDecidable(what: string): string {
  return (
    `must be ${what}: gatehouse reads path, source, destination and paths as workspace paths ` +
    'and decides on each (docs/mcp.md), so a call that gives one in another form is not sent'
  );
}

/** A stdio call's workspace paths, for the pipeline's checks and the policy (as a built-in path tool's). */
export function pathRefs(input: McpArguments): WorkspacePathRef[] {
  const refs: WorkspacePathRef[] = [];
  for (const field of MCP_PATH_FIELDS) {
    const v = input[field];
    if (typeof v === 'string' && v !== '') refs.push({ field, path: v, resolve: true });
  }
  const list = input[MCP_PATH_LIST_FIELD];
  if (Array.isArray(list))
    list.forEach((v, i) => {
      if (typeof v === 'string' && v !== '')
        refs.push({ field: `${MCP_PATH_LIST_FIELD}.${i}`, path: v, resolve: true });
    });
  return refs;
}

/**
 * The arguments a stdio server is sent: each workspace path made absolute under /workspace, the
 * path the policy decided on. A relative path means something else to each server (server-filesystem
 * resolves it against the first directory it was given that holds it, another against its cwd, and
 * `~/x` is the home directory to it), so a rule on `src/**` would otherwise allow a write to
 * `docs/src/x` and a deny on `docs/secret/**` miss a read of `secret/k` by a server rooted at docs/.
 */
export function absolutePathArguments(input: McpArguments): McpArguments {
  const out: McpArguments = { ...input };
  const absolute = (v: string): string => path.posix.resolve(WORKSPACE_ROOT, v);
  for (const field of MCP_PATH_FIELDS) {
    const v = out[field];
    if (typeof v === 'string') out[field] = absolute(v);
  }
  const list = out[MCP_PATH_LIST_FIELD];
  if (Array.isArray(list))
    out[MCP_PATH_LIST_FIELD] = list.map((v: unknown) => (typeof v === 'string' ? absolute(v) : v));
  return out;
}
