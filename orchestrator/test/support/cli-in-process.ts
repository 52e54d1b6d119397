import { vi } from 'vitest';
import { buildProgram } from '../../src/cli/program';
import { runProgram } from '../../src/cli/run-program';

export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * The CLI's own program run in this process on `args`, as `gatehouse ARGS` would run it, with what
 * it writes kept and `env` set for its duration: for tests that call the CLI hundreds of times,
 * where a process each costs 0.3–2 s. The built binary is still tested by the e2e tests and by a
 * few calls in each such file. Only for commands that finish on their own (no signals, no TTY).
 */
export async function cliInProcess(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const keep =
    (into: (text: string) => void) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      into(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      done?.();
      return true;
    };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(keep((t) => (stdout += t)));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(keep((t) => (stderr += t)));
  const savedEnv = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const savedExitCode = process.exitCode;
  Object.assign(process.env, env);
  process.exitCode = undefined;
  try {
    await runProgram(buildProgram(), ['node', 'gatehouse', ...args]);
    return { status: Number(process.exitCode ?? 0), stdout, stderr };
  } finally {
    process.exitCode = savedExitCode;
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    out.mockRestore();
    err.mockRestore();
  }
}
