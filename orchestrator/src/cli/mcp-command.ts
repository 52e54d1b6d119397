import { mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../config/index';
import { readConfigFile } from '../config/read-config';
import { keyLocation } from '../events/key';
import { defaultStateRoot, explicitStateDir } from '../events/state-home';
import { serveMcp } from '../mcp-server/serve';
import type { ServeSettings } from '../mcp-server/serve-settings';
import { loadPolicyFile } from '../policy/index';
import { loadShellClassifier } from '../policy/shell/index';
import { createProvider } from '../providers/index';
import { dockerHostOption } from './docker-host-option';
import { parseCount } from './option-parsers';
import { MODEL_HELP } from './session-commands';
import { UsageError } from './usage';

interface ServeFlags {
  policy?: string;
  model?: string;
  root?: string[];
  config?: string;
  stateDir?: string;
  maxRuns: number;
  dockerHost?: string;
  memory?: boolean;
  memoryBudget?: number;
}

/** `gatehouse mcp serve`: gatehouse as an MCP server over stdio (docs/mcp-server.md). */
export function registerMcpCommand(program: Command): void {
  dockerHostOption(
    program
      .command('mcp')
      .description('gatehouse and the Model Context Protocol')
      .command('serve')
      .description('serve run, status and approve as MCP tools on stdin/stdout, under a required policy')
      .option('--policy <file>', "required: the policy every run is held to (a caller's config can only narrow it)")
      .option('--model <spec>', `required: the model every run uses: ${MODEL_HELP}`)
      .option(
        '--root <dir>',
        'a folder whose repositories (and configs) callers may name (repeatable; default: the current directory)',
        (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
      )
      .option('--config <file>', "trusted project config; a caller's config can only narrow it (no policy in it)")
      .option('--state-dir <dir>', `where its runs are kept (default: $GATEHOUSE_STATE_DIR, else ${mcpStateHelp()})`)
      .option('--max-runs <n>', 'runs (and resumes) going at once; a call beyond is refused', parseCount, 2)
      .option('--memory', "every run recalls and may propose memory, kept in the server's state (docs/memory.md)")
      .option('--memory-budget <tokens>', 'estimated tokens recalled records may take (default 1000)', parseCount),
  ).action(async (o: ServeFlags) => {
    const settings = await serveSettings(o);
    try {
      await serveMcp(settings);
    } finally {
      rmSync(settings.workDir, { recursive: true, force: true });
    }
  });
}

function mcpStateHelp(): string {
  return 'STATE_ROOT/mcp-server, STATE_ROOT being $XDG_STATE_HOME/gatehouse or ~/.local/state/gatehouse';
}

/** Everything a caller cannot change, checked before the server answers anyone: a bad setting stops it (exit 2). */
async function serveSettings(o: ServeFlags): Promise<ServeSettings> {
  if (o.policy === undefined)
    throw new UsageError(
      'gatehouse mcp serve needs --policy FILE: the policy every run a caller starts is held to (a caller can ' +
        'narrow it, never widen it). Write one (docs/policy.md) and pass it, e.g. --policy .gatehouse/policy.json',
    );
  if (o.model === undefined)
    throw new UsageError(`gatehouse mcp serve needs --model SPEC (${MODEL_HELP}): the model every run uses`);
  createProvider(o.model);
  if (o.memoryBudget !== undefined && !o.memory) throw new UsageError('--memory-budget needs --memory');
  const classifier = await loadShellClassifier();
  const policyFile = path.resolve(o.policy);
  const policy = loadPolicyFile(policyFile, classifier).file;
  let config: string | undefined;
  if (o.config !== undefined) {
    config = path.resolve(o.config);
    const read = readConfigFile(config);
    if (read.problems.length > 0) throw new ConfigError(read.problems);
    if (read.config?.policy !== undefined)
      throw new UsageError(
        `${config} has a "policy"; gatehouse mcp serve takes its policy from --policy only: move it there`,
      );
  }
  const roots = (o.root?.length ? o.root : [process.cwd()]).map((r) => {
    try {
      const real = realpathSync(r);
      if (statSync(real).isDirectory()) return real;
    } catch {
      // said below
    }
    throw new UsageError(`--root ${r} is not a folder`);
  });
  const stateDir = explicitStateDir(o.stateDir) ?? path.join(defaultStateRoot(), 'mcp-server');
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-mcp-'));
  const key = keyLocation();
  // What a caller's repository may neither be, hold nor lie inside: the key, the state, the policies handed to runs.
  const privatePaths = [key.keyFile, key.headsDir, defaultStateRoot(), stateDir, workDir].map((p) => realOrSelf(p));
  return {
    cli: process.argv[1]!,
    model: o.model,
    policyFile,
    policy,
    ...(config ? { config } : {}),
    roots,
    stateDir,
    maxRuns: o.maxRuns,
    ...(o.dockerHost ? { dockerHost: o.dockerHost } : {}),
    ...(o.memory ? { memory: o.memoryBudget !== undefined ? { tokenBudget: o.memoryBudget } : {} } : {}),
    workDir,
    privatePaths,
  };
}

/** A path's real path where it exists (roots are compared as real paths), else the path itself. */
function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
