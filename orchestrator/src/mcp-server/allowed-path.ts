import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { GatehouseError } from '../errors';

/** A tool call's input the server will not act on (a path outside its roots, no such run): nothing was started. */
export class McpRequestError extends GatehouseError {
  readonly kind = 'refused';
}

/**
 * The real path of a repository or config a caller named, if it lies inside one of the server's
 * roots (`--root`). Links are resolved first, so a link inside a root that leads out of it is
 * refused like the path it leads to. The path must be absolute: the caller does not know the
 * server's working directory.
 */
export function allowedPath(
  given: string,
  roots: readonly string[],
  what: 'repository' | 'config',
  privatePaths: readonly string[] = [],
): string {
  if (!path.isAbsolute(given))
    throw new McpRequestError(`the ${what} ${JSON.stringify(given)} is not an absolute path; give its full path`);
  let real: string;
  try {
    real = realpathSync(given);
  } catch {
    throw new McpRequestError(`no such ${what} ${given}`);
  }
  const inside = roots.some((root) => isWithin(real, root));
  if (!inside)
    throw new McpRequestError(
      `the ${what} ${given}${real !== given ? ` (${real})` : ''} is outside the folders this server accepts ` +
        `(${roots.join(', ')}); use one inside them, or start the server with --root for its folder`,
    );
  // The log key and the state would be copied into the sandbox with a folder that holds them, and read back.
  const secret = privatePaths.find((p) => isWithin(p, real) || isWithin(real, p));
  if (secret !== undefined)
    throw new McpRequestError(
      `the ${what} ${given} holds gatehouse's own key or state (${secret}), which no run is given; ` +
        'name a repository beside it (start the server with --root for your projects folder)',
    );
  const st = statSync(real);
  if (what === 'repository' && !st.isDirectory()) throw new McpRequestError(`the repository ${given} is not a folder`);
  if (what === 'config') {
    if (!st.isFile()) throw new McpRequestError(`the config ${given} is not a regular file`);
    if (st.size > MAX_CONFIG_BYTES)
      throw new McpRequestError(`the config ${given} is ${st.size} bytes; a config is at most ${MAX_CONFIG_BYTES}`);
  }
  return real;
}

const MAX_CONFIG_BYTES = 1024 * 1024;

/** Whether `p` is `dir` or inside it. */
function isWithin(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}
