import { MIN_ENV_SECRET, Redactor, SECRET_NAME } from '../events/redact';
import type { RunEnvironment } from './types';

/**
 * The redactor of a run's log: the environment's credentials (by their names), every
 * `--setup-env` value, whatever its variable is called — naming it on the command line is what
 * declares it a secret (PIP_INDEX_URL with a password in it looks like no credential by name) —
 * and what the config gives an MCP server that may be a credential (docs/mcp.md), which a server
 * could echo back in a result: every `headers` value, and each `env` value whose name reads as one
 * (the rule gatehouse's own environment is held to), of at least MIN_ENV_SECRET characters.
 */
export function runRedactor(o: Pick<RunEnvironment, 'setupEnv' | 'projectConfig'>): Redactor {
  const setup = Object.entries(o.setupEnv ?? {}).map(([name, value]) => ({ name, value }));
  const mcp = Object.entries(o.projectConfig?.mcp ?? {}).flatMap(([server, c]) =>
    Object.entries(c.command !== undefined ? (c.env ?? {}) : (c.headers ?? {}))
      .filter(([name, value]) => value.length >= MIN_ENV_SECRET && (c.command === undefined || SECRET_NAME.test(name)))
      .map(([name, value]) => ({ name: `mcp.${server}.${name}`, value })),
  );
  return Redactor.fromEnv(process.env, [...setup, ...mcp]);
}
