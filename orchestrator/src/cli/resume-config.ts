import path from 'node:path';
import { ConfigError } from '../config/index';
import type { McpServers } from '../config/mcp-schema';
import { readConfigFile } from '../config/read-config';

/**
 * The MCP servers of the trusted config given to `gatehouse resume --config FILE`: only they are
 * taken from it (the values the log does not keep); everything else comes from the run's record.
 * A file that does not read or validate fails as it would for `gatehouse run`.
 */
export function resumeConfigMcp(file: string | undefined): McpServers | undefined {
  if (file === undefined) return undefined;
  const read = readConfigFile(path.resolve(file));
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return read.config?.mcp;
}
