import type { EventDataOf } from '@gatehouse/shared';
import type { ResolvedConfig } from '../config/types';
import { recordMcpServers } from '../mcp/recorded-servers';

type Recorded = NonNullable<NonNullable<EventDataOf<'run.started'>['config']>['environment']>;

/**
 * The parts of the config that make a run's sandboxes and start its MCP servers, as run.started
 * records them (names of secrets only: mcp/recorded-servers.ts).
 */
export function recordedEnvironment(c: ResolvedConfig, secretNames: readonly string[]): Recorded {
  const limits: Record<string, number> = {};
  for (const [k, v] of Object.entries(c.limits)) if (typeof v === 'number') limits[k] = v;
  return {
    image: c.image,
    setup: [...c.setup],
    ...(c.check ? { check: c.check } : {}),
    egress: { setup: [...c.egress.setup], agent: [...c.egress.agent], deny: [...c.egress.deny] },
    copy: { exclude: [...c.copy.exclude], include: [...c.copy.include] },
    limits,
    setupSecrets: [...secretNames],
    ...(c.mcp && Object.keys(c.mcp).length > 0 ? { mcp: recordMcpServers(c.mcp) } : {}),
  };
}

/**
 * The config a resumed run is held to: the one it started with, as recorded. Its policy and budgets
 * are restored on their own (resume.ts), so they are not part of this, nor are its MCP servers,
 * whose values the log does not keep (mcp/recorded-servers.ts puts them back).
 */
export function configFromRecord(config: EventDataOf<'run.started'>['config']): ResolvedConfig | undefined {
  const env = config?.environment;
  if (!config || !env) return undefined;
  return {
    source: config.source,
    sha256: config.sha256,
    ignored: config.ignored,
    image: env.image,
    setup: env.setup,
    ...(env.check ? { check: env.check } : {}),
    egress: env.egress,
    copy: env.copy,
    limits: env.limits,
    budgets: {},
  };
}
