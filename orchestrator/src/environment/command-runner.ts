import type { OutputChunk } from '@gatehouse/shared';
import { runtimeApproval } from '../approval/runtime-approval';
import type { Sandbox } from '../sandbox/index';

export interface CommandResult {
  status: string;
  exitCode: number | null;
  output: string;
  truncated: boolean;
  durationMs: number;
}

/** Runs one command line in a sandbox as the command user: the environment's own work, not the model's. */
export type CommandRunner = (
  command: string,
  opts: { purpose: string; timeoutMs: number; env?: Record<string, string>; onOutput?: (chunk: OutputChunk) => void },
) => Promise<CommandResult>;

/** Output kept per command: setup logs can be long, and the log keeps its head and tail. */
const OUTPUT_CAP = 1024 * 1024;

export function sandboxRunner(sandbox: Sandbox, signal?: AbortSignal): CommandRunner {
  return async (command, opts) => {
    const input = { command, ...(opts.env ? { env: opts.env } : {}) };
    const started = performance.now();
    const r = await sandbox.invoke('exec', input, {
      approval: runtimeApproval('exec', input, opts.purpose),
      timeoutMs: opts.timeoutMs,
      outputCap: OUTPUT_CAP,
      ...(opts.onOutput ? { onOutput: opts.onOutput } : {}),
      ...(signal ? { signal } : {}),
    });
    return {
      status: r.status,
      exitCode: r.exitCode ?? null,
      output: r.output,
      truncated: r.truncated,
      durationMs: Math.round(performance.now() - started),
    };
  };
}
