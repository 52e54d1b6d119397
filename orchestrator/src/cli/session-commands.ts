import { Option, type Command } from 'commander';
import {
  collect,
  parseCount,
  parseDuration,
  parseMode,
  parseOnAsk,
  parseRepo,
  parseSeconds,
  parseUsd,
} from './option-parsers';
import { resumeCommand, runCommand } from './run';
import { dockerHostOption } from './docker-host-option';
import { Mode } from '../policy/mode';
import { DEFAULT_BUDGETS } from '../run/budgets';
import { STORE_HELP } from './store-flag';

interface Help {
  stateDirHelp: string;
  runRef: string;
}

/**
 * Options `run`, `resume` and `plan` share: the Docker engine, how asks are answered, the budgets,
 * where runs live, output.
 */
export function sessionOptions(cmd: Command, h: Pick<Help, 'stateDirHelp'>): Command {
  return dockerHostOption(cmd)
    .option(
      '--on-ask <what>',
      'with no one to ask (no TTY, CI, --json): pause (exit 3, approve later) or deny',
      parseOnAsk,
      'pause' as const,
    )
    .option(
      '--approval-wait <seconds>',
      'how long a request waits for an answer over NATS (policy approvers) before --on-ask or the terminal decides',
      parseSeconds,
      120,
    )
    .option(
      '--max-turns <n>',
      'stop after this many model turns (counted over the whole run)',
      parseCount,
      DEFAULT_BUDGETS.maxTurns,
    )
    .option(
      '--max-tool-calls <n>',
      'stop after this many tool calls (counted over the whole run)',
      parseCount,
      DEFAULT_BUDGETS.maxToolCalls,
    )
    .option(
      '--max-tokens <n>',
      `stop after this many input plus output tokens, sub-agents' included (default ${DEFAULT_BUDGETS.maxTokens})`,
      parseCount,
    )
    .option(
      '--max-cost <usd>',
      "stop once the run has cost this many US dollars, sub-agents' included, by the model's price (docs/runs.md)",
      parseUsd,
    )
    .option(
      '--max-wall <duration>',
      'stop after this long running, pauses not counted: 90s, 30m, 2h ' +
        `(default ${DEFAULT_BUDGETS.wallClockMs / 60_000}m)`,
      parseDuration,
    )
    .option('--state-dir <dir>', h.stateDirHelp)
    .option('--store <url>', STORE_HELP)
    .option('--json', 'print every event as one JSON line on stdout, nothing else')
    .option('--apply', 'write the resulting changes back to the repository (only after an accepted final answer)');
}

/** The model option's help (`run` requires it; `plan` checks it itself, as `plan approve` needs none). */
export const MODEL_HELP = 'openai:MODEL, anthropic:MODEL, or scripted:PATH (a JSON script of turns)';

/** The options that start a run (`run`, `plan`) besides --model: repository, mode, policy, config, image, check. */
export function startOptions(cmd: Command): Command {
  return cmd
    .option('--repo <dir>', 'repository to work on (copied into the sandbox)', parseRepo, '.')
    .option('--mode <mode>', `${Mode.options.join(' | ')} (default: the policy file's, else confirm-novel)`, parseMode)
    .option('--policy <file>', 'policy file (default: REPO/.gatehouse/policy.json if present)')
    .option(
      '--config <file>',
      "project config, trusted whole (the repository's .gatehouse/config.json can only narrow it; docs/config.md)",
    )
    .option('--image <image>', "sandbox image: preset:node, preset:python or any image (over the config's)")
    .option(
      '--check <command>',
      "the command that decides success: final only if it exits 0 after the last change (over the config's check)",
    )
    .option(
      '--setup-env <name>',
      "pass this variable of gatehouse's environment to the setup commands only (repeatable)",
      collect,
      [] as string[],
    );
}

/** `run` and `resume`: the commands that drive a session, and the options they share. */
export function registerSessionCommands(program: Command, h: Help): void {
  sessionOptions(
    startOptions(
      program
        .command('run')
        .description('run an agent on a task, in a sandbox holding a copy of the repository')
        .argument('<task>', 'what the agent should do')
        .requiredOption('--model <spec>', MODEL_HELP)
        .option('--run-id <id>', "the run's id (a queue worker passes the job's; refused if that run exists)")
        .option('--memory', 'recall remembered records into the context and offer the remember tool (docs/memory.md)')
        .option('--memory-budget <tokens>', 'estimated tokens recalled records may take (default 1000)', parseCount)
        // For `gatehouse mcp serve` (docs/mcp-server.md): its caller's config, which can only narrow.
        .addOption(
          new Option(
            '--narrow-config <file>',
            'a config that can only narrow, like REPO/.gatehouse/config.json',
          ).hideHelp(),
        )
        // Also for mcp serve: the folder it checked REPO as (mcp-server/repository-pin.ts); another is refused.
        .addOption(new Option('--repo-pin <dev:ino>', 'the folder --repo must still be').hideHelp()),
    ),
    h,
  ).action(async (task: string, o: Parameters<typeof runCommand>[1], cmd: Command) => {
    const explicit = {
      maxTurns: cmd.getOptionValueSource('maxTurns') === 'cli',
      maxToolCalls: cmd.getOptionValueSource('maxToolCalls') === 'cli',
    };
    process.exitCode = await runCommand(task, { ...o, explicit });
  });

  sessionOptions(
    program
      .command('resume')
      .description(
        'continue a paused, interrupted or over-budget run from its log, in a fresh sandbox restored to its workspace',
      )
      .argument('<run>', h.runRef)
      .option(
        '--repo <dir>',
        "the run's repository (default: the current directory must be in it); another one is refused",
        parseRepo,
      )
      .option(
        '--config <file>',
        "the trusted config the run started with: its MCP servers' env and header values, which the log does not " +
          'keep (docs/mcp.md); nothing else is taken from it',
      ),
    h,
  ).action(async (run: string, o: Parameters<typeof resumeCommand>[1], cmd: Command) => {
    const explicit = {
      maxTurns: cmd.getOptionValueSource('maxTurns') === 'cli',
      maxToolCalls: cmd.getOptionValueSource('maxToolCalls') === 'cli',
    };
    process.exitCode = await resumeCommand(run, { ...o, explicit });
  });
}
