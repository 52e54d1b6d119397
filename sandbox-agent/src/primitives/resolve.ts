import type { InvocationOf } from '@gatehouse/shared';
import type { Location } from '../workspace';
import { ok, type Outcome, type PrimitiveContext } from './context';

/**
 * Where workspace paths really lead, every symlink resolved: what the orchestrator's policy decides
 * on besides the path as requested. Reads link targets only, never file content, and changes nothing.
 */
export function resolvePaths(input: InvocationOf<'resolve'>['input'], ctx: PrimitiveContext): Promise<Outcome> {
  const paths = input.paths.map((p) => ctx.ws.locate(p));
  const output = paths.map(describe).join('\n');
  return Promise.resolve(ok(output, { kind: 'resolve', paths }));
}

function describe(r: Location): string {
  if (r.error !== undefined) return `${r.path} -> (${r.error})`;
  const notes = [
    r.outside && 'outside the workspace',
    !r.exists && 'does not exist',
    r.dangling && 'through a dangling link',
  ];
  const said = notes.filter(Boolean).join(', ');
  return `${r.path} -> ${r.real ?? '?'}${said ? ` (${said})` : ''}`;
}
