import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { EventEnvelope } from '@gatehouse/shared';
import { resolveStateDir } from '../events/paths';
import { runAgent, type AgentRunResult } from '../loop/session';
import { createLogger } from '../log/logger';
import type { Mode } from '../policy/interim';
import { createProvider } from '../providers/index';
import { SandboxDriver } from '../sandbox/index';
import { humanProgress } from './progress';

export interface RunFlags {
  repo: string;
  model: string;
  mode: Mode;
  maxTurns: number;
  maxToolCalls: number;
  stateDir?: string;
  json?: boolean;
  apply?: boolean;
}

/** Exit codes of `gatehouse run` (README): one per way a run can end. */
export const RUN_EXIT = { final: 0, failed: 1, usage: 2, paused: 3, partial: 4, cancelled: 130 } as const;

export async function runCommand(task: string, flags: RunFlags): Promise<number> {
  const provider = createProvider(flags.model); // a bad spec or a missing key throws a usage error
  const stateDir = resolveStateDir(flags.stateDir);
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  const onEvent = flags.json ? (e: EventEnvelope) => out(JSON.stringify(e)) : humanProgress(out);

  const controller = new AbortController();
  // First Ctrl-C: cancel cleanly (sandbox removed, log completed). A second one: leave now; the
  // next start reaps the sandbox. Either way the exit code says "cancelled".
  const cancel = (): void => {
    if (controller.signal.aborted) process.exit(RUN_EXIT.cancelled);
    if (!flags.json) process.stderr.write('cancelling… (Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', cancel);
  process.on('SIGTERM', cancel);
  const driver = await SandboxDriver.start({ log: createLogger() });
  let result: AgentRunResult;
  try {
    result = await runAgent({
      task,
      repoDir: flags.repo,
      provider,
      driver,
      stateDir,
      mode: flags.mode,
      budgets: { maxTurns: flags.maxTurns, maxToolCalls: flags.maxToolCalls, maxTokens: 2_000_000, wallClockMs: 30 * 60_000 },
      apply: Boolean(flags.apply),
      signal: controller.signal,
      onEvent,
    });
  } finally {
    process.off('SIGINT', cancel);
    process.off('SIGTERM', cancel);
    await driver.close();
  }
  if (!flags.json) summary(result, flags, out);
  return RUN_EXIT[result.status];
}

function summary(r: AgentRunResult, flags: RunFlags, out: (l: string) => void): void {
  out('');
  out(`outcome: ${r.status} (${r.stopReason})`);
  if (r.answer) out(`answer: ${r.answer}`);
  if (r.filesChanged.length === 0) out('files changed: none');
  else {
    out(`files changed: ${r.filesChanged.join(', ')}`);
    if (r.diffFile) out(readFileSync(r.diffFile, 'utf8').trimEnd());
    out(r.applied ? `applied to ${flags.repo}` : `not applied: the repository is untouched; the diff is in ${path.relative(process.cwd(), r.diffFile ?? r.runDir) || '.'}${flags.apply ? '' : ' (use --apply to write it back)'}`);
  }
  out(`log: ${path.relative(process.cwd(), r.runDir) || r.runDir}  (gatehouse show ${r.runId}, gatehouse verify ${r.runId})`);
}
