import type { ResultData, ResultStatus } from '@gatehouse/shared';
import type { Baseline } from '../baseline';
import type { McpSessions } from '../mcp-sessions';
import type { CommandUser } from '../users';
import type { Workspace } from '../workspace';

export interface PrimitiveContext {
  ws: Workspace;
  /** The workspace as it was at start-up, for `changes`. */
  baseline: { baseline: Baseline; tree: string };
  signal: AbortSignal;
  timeoutMs: number;
  outputCap: number;
  onOutput: (stream: 'stdout' | 'stderr', text: string) => void;
  /** Commands run as this user; files the daemon creates are given to it. */
  user: CommandUser;
  /** This invocation's id: an MCP session is known by it. */
  invocationId: string;
  /** The running MCP sessions, whose stdin `mcp_send` writes to. */
  sessions: McpSessions;
}

/** What a primitive produced; the daemon wraps it into an InvocationResult. */
export interface Outcome {
  status: Exclude<ResultStatus, 'rejected'>;
  exitCode?: number | null;
  signal?: string | null;
  output: string;
  bytes: number;
  truncated: boolean;
  filesChanged?: string[];
  data?: ResultData;
  error?: { code: 'timeout' | 'cancelled' | 'io_error' | 'internal' | 'too_large'; message: string };
}

export function ok(output: string, data: ResultData, extra: Partial<Outcome> = {}): Outcome {
  const bytes = Buffer.byteLength(output);
  return { status: 'ok', output, bytes, truncated: false, data, ...extra };
}
