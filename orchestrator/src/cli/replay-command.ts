import { InvalidArgumentError, type Command } from 'commander';
import { ReplayMode, type EventEnvelope } from '@gatehouse/shared';
import { resolveRun } from '../events/run-ref';
import { replayExitCode, replayRun } from '../replay/replay-run';
import type { ReplayOptions } from '../replay/replay-types';
import { STORE_HELP } from './store-flag';

interface ReplayFlags {
  mode: ReplayMode;
  json?: boolean;
  policy?: string;
  model?: string;
  allowWrites?: boolean;
  stateDir?: string;
}

function parseMode(value: string): ReplayMode {
  const r = ReplayMode.safeParse(value);
  if (r.success) return r.data;
  throw new InvalidArgumentError(`must be one of ${ReplayMode.options.join(', ')}`);
}

/**
 * `gatehouse replay RUN --mode MODE`: the replay is a run of its own (its id is printed), and the
 * exit code says whether anything that matters differed (replay/replay-run.ts). `--json` prints the
 * replay's events, one per line, and nothing else.
 */
export async function replayCommand(ref: string, f: ReplayFlags): Promise<number> {
  const { stateDir, runId } = resolveRun(ref, { stateDir: f.stateDir });
  const ac = new AbortController();
  const stop = () => ac.abort();
  process.once('SIGINT', stop);
  const o: ReplayOptions = {
    mode: f.mode,
    stateDir,
    signal: ac.signal,
    ...(f.policy !== undefined ? { policyFile: f.policy } : {}),
    ...(f.model !== undefined ? { modelSpec: f.model } : {}),
    ...(f.allowWrites ? { allowWrites: true } : {}),
  };
  const print = (e: EventEnvelope) => process.stdout.write(`${JSON.stringify(e)}\n`);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const r = await replayRun(runId, o, f.json ? { onEvent: print } : { say });
    if (!f.json) {
      const { verdict, compared, differed, skipped } = r.outcome;
      say(`replay ${r.replayRunId} (${f.mode} of ${runId}): ${verdict}: ${compared} compared, ${differed} differed`);
      if (skipped > 0) say(`  ${skipped} skipped`);
    }
    return replayExitCode(r.outcome);
  } finally {
    process.removeListener('SIGINT', stop);
  }
}

export function registerReplayCommand(program: Command, h: { stateDirHelp: string; runRef: string }): void {
  program
    .command('replay')
    .description(
      'replay a recorded run as a run of its own, never touching its repository: trace (rebuild it from the log), ' +
        'dry-run (decide its calls again under a policy), model (give its context to another model), execution ' +
        '(re-run its read-only calls in a fresh sandbox)',
    )
    .argument('<run>', h.runRef)
    .requiredOption('--mode <mode>', 'trace | dry-run | model | execution', parseMode)
    .option('--policy <file>', 'dry-run: decide with this policy file (default: the one the run would load today)')
    .option('--model <spec>', 'model: the model given the recorded context')
    .option('--allow-writes', 'execution: also re-run calls that are not read-only (inside the fresh sandbox only)')
    .option('--json', "print the replay's events as JSON lines on stdout, nothing else")
    .option('--state-dir <dir>', h.stateDirHelp)
    .option('--store <url>', STORE_HELP)
    .action(async (run: string, f: ReplayFlags) => {
      process.exitCode = await replayCommand(run, f);
    });
}
