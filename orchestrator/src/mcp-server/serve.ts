import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { errorKindOf } from '../errors';
import { packageVersion } from '../sandbox/paths';
import { approveTool, ApproveInput } from './approve-tool';
import { runTool, RunInput } from './run-tool';
import type { ServeSettings } from './serve-settings';
import { ServerState } from './server-state';
import { statusTool, StatusInput } from './status-tool';
import { toolError } from './tool-result';
import { framesOnlyStdout } from './frames-only-stdout';

const Pending = z.object({
  runId: z.string(),
  requestId: z.string(),
  tool: z.string(),
  input: z.unknown(),
  rule: z.string(),
  reason: z.string(),
});

/** What run and approve return as structured content (run-outcome.ts's RunOutcome, with notes). */
const OutcomeOutput = {
  runId: z.string(),
  outcome: z.enum(['final', 'partial', 'failed', 'cancelled', 'paused', 'running', 'unfinished']),
  stopReason: z.string().optional(),
  decidedBy: z.string().optional(),
  answer: z.string().optional(),
  filesChanged: z.array(z.string()),
  diff: z.string().optional(),
  diffTruncated: z.boolean().optional(),
  diffFile: z.string().optional(),
  pending: z.array(Pending),
  runDir: z.string(),
  notes: z.array(z.string()),
};

/**
 * The largest message a caller may send (a task is at most 20,000 characters): a bigger one closes
 * the connection (the SDK's read buffer refuses it), rather than growing the server's memory.
 */
const MAX_MESSAGE_BYTES = 1024 * 1024;

/** How long the runs going get to cancel cleanly when the connection closes. */
const STOP_WAIT_MS = 60_000;

/**
 * `gatehouse mcp serve`: gatehouse as an MCP server on stdin/stdout (docs/mcp-server.md). Stdout
 * carries only MCP frames; everything else goes to stderr. Resolves when the connection closes and
 * the runs going have been cancelled.
 */
export async function serveMcp(settings: ServeSettings): Promise<void> {
  const state = new ServerState(settings);
  const server = new McpServer({ name: 'gatehouse', version: packageVersion() });
  const client = (): string => {
    const name = server.server.getClientVersion()?.name ?? 'unnamed';
    return `mcp client ${name.replace(/[^\x20-\x7e]/g, '?').slice(0, 100)}`;
  };
  server.registerTool(
    'run',
    {
      title: 'Run a task in a gatehouse sandbox',
      description:
        "Runs an agent on the task in a sandbox holding a copy of the repository, under the server's policy (a " +
        'config can only narrow it). Returns the outcome, the answer, the diff (the repository itself is never ' +
        'changed) and the run id. A run that needs an approval pauses: answer it with approve.',
      inputSchema: RunInput,
      outputSchema: OutcomeOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    (input, extra) => guarded(() => runTool(state, input, extra)),
  );
  server.registerTool(
    'status',
    {
      title: 'Status of gatehouse runs',
      description:
        "A run's state (outcome, answer, diff, pending approvals), or without runId the runs of this session.",
      inputSchema: StatusInput,
      annotations: { readOnlyHint: true },
    },
    (input) => guarded(async () => statusTool(state, input)),
  );
  server.registerTool(
    'approve',
    {
      title: 'Answer a pending approval',
      description:
        'Approves or denies a pending request of a paused run this server started (as gatehouse approve/deny ' +
        'does, recorded in its log); after the last answer the run resumes and its outcome is returned.',
      inputSchema: ApproveInput,
      outputSchema: OutcomeOutput,
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    (input, extra) => guarded(() => approveTool(state, input, extra, client())),
  );
  const transport = new StdioServerTransport(process.stdin, framesOnlyStdout(), { maxBufferSize: MAX_MESSAGE_BYTES });
  // The connection closes, or the client stops the server (its SDK sends SIGTERM 2 s after closing stdin): the
  // runs going are cancelled, each child ending its run cleanly, rather than left running unattended.
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await server.connect(transport);
  process.stderr.write(
    `gatehouse mcp: serving on stdio; policy ${settings.policyFile}; roots ${settings.roots.join(', ')}; runs in ` +
      `${settings.stateDir}\n`,
  );
  await closed;
  await state.stop(STOP_WAIT_MS);
  await server.close().catch(() => undefined);
}

/** Any error a tool meets becomes a tool error (`isError`) that says what happened and what to do. */
async function guarded(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const kind = errorKindOf(e);
    return toolError(kind === 'internal' ? `gatehouse failed (a bug: report it): ${message}` : `not done: ${message}`);
  }
}
