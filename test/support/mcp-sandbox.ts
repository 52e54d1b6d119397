import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newId } from '@gatehouse/shared';
import {
  codingTools,
  resolveSurface,
  RunLog,
  withMcpTools,
  type Mode,
  type Sandbox,
  type SandboxDriver,
  type ToolRegistry,
} from '@gatehouse/orchestrator';
import { pipelineFor, policyOf, type PipelineHarness } from './pipeline';
import { startDriver } from './sandbox';

type McpServers = NonNullable<Parameters<typeof withMcpTools>[0]['servers']>;

/** A real sandbox whose MCP servers were listed as a run lists them (sandboxed-auto, no egress). */
export interface McpSandbox {
  driver: SandboxDriver;
  sandbox: Sandbox;
  registry: ToolRegistry;
  surface: readonly string[];
  log: RunLog;
  /** The run's pipeline under `policy` in `mode` (default sandboxed-auto). */
  harness(policy?: object, mode?: Mode): PipelineHarness;
}

/**
 * Commits what the test wrote into `repo` (its servers), starts a sandbox on it and lists `servers`
 * there: each runs inside the sandbox as the command user, as in a run.
 */
export async function mcpSandbox(repo: string, servers: McpServers): Promise<McpSandbox> {
  execFileSync('git', ['add', '-A'], { cwd: repo });
  execFileSync('git', ['-c', 'user.email=t@g', '-c', 'user.name=t', 'commit', '-qm', 'servers'], { cwd: repo });
  const driver = await startDriver();
  const sandbox = await driver.createSandbox({ runId: newId('run'), repoDir: repo });
  const registry = codingTools();
  const log = RunLog.create(mkdtempSync(path.join(os.tmpdir(), 'gh-mcp-')), newId('run'));
  const surface = await withMcpTools({
    servers,
    egress: { agent: [], deny: [] },
    mode: 'sandboxed-auto',
    depth: 0,
    registry,
    surface: resolveSurface(registry, { mode: 'sandboxed-auto' }),
    sandbox,
    log,
  });
  const harness = (policy: object = {}, mode: Mode = 'sandboxed-auto') =>
    pipelineFor(sandbox, {
      registry,
      surface: [...surface],
      mode,
      policy: policyOf(policy, mode),
      limits: { observationBudget: 8000 },
    });
  return { driver, sandbox, registry, surface, log, harness };
}
