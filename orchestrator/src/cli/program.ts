import { parseBase, parseMode, parseOnBehalfOf, parseRepo, parseScope } from './option-parsers';
import { doctor } from './doctor';
import { buildImages } from './images';
import { natsInit } from './nats';
import { reap, sandboxUp, smoke } from './sandbox';
import { verify } from './verify';
import { showCommand } from './history';
import { DEFAULT_PRUNE_AGE, pruneCommand, runsCommand } from './runs';
import { legacyRunsNotice } from './legacy-notice';
import { treeCommand } from './tree';
import { registerSessionCommands } from './session-commands';
import { applyDockerHostOption, dockerHostOption } from './docker-host-option';
import { registerReportCommand } from './report-command';
import { registerReplayCommand } from './replay-command';
import { registerPlanCommand } from './plan-command';
import { registerQueueCommands } from './queue-commands';
import { registerEvalCommand } from './eval-command';
import { answerCommand, approvalsCommand } from './approvals';
import { answerOverNatsCommand, approverCredsCommand, approverKeygen, natsRunId } from './approver';
import { policyCheckCommand } from './policy-command';
import { UsageError } from './usage';
import { Mode } from '../policy/mode';
import { packageVersion } from '../sandbox/paths';
import { GatehouseCommand } from './gatehouse-command';
import { answerThroughStore, pullBeforeReading, STORE_HELP } from './store-flag';
import { exportCommand } from './export-command';
import { registerMcpCommand } from './mcp-command';
import { registerMemoryCommands } from './memory-commands';

/**
 * The gatehouse command line as commander's program: every command, flag and hook, without parsing
 * anything or touching the process (main.ts does that), so that tests can walk and parse it in-process.
 */
export function buildProgram(): GatehouseCommand {
  // Unknown flags: every one of a command at once, with the closest (gatehouse-command.ts).
  const program = new GatehouseCommand('gatehouse')
    .description(
      'An agent harness: the model proposes; gatehouse validates, approves, executes in a sandbox, ' +
        'observes and records.',
    )
    .version(packageVersion(), '-V, --version', 'print the version')
    .exitOverride()
    .configureOutput({ outputError: (s, write) => write(s) });

  dockerHostOption(program.command('doctor').description('check Docker, images and NATS, each with how to fix it'))
    .option('--json', 'print the report as JSON')
    .action(async (o: { json?: boolean }) => {
      process.exitCode = await doctor(Boolean(o.json));
    });

  const images = program.command('images').description('sandbox, NATS and egress proxy images');
  images
    .command('build')
    .description('build the images if missing (cached by content hash)')
    .option(
      '--base <choice>',
      'auto | public | local (a debootstrap base where no registry is reachable)',
      parseBase,
      'auto',
    )
    .action(async (o: { base: 'auto' | 'public' | 'local' }) => {
      await buildImages(o.base);
    });

  const sandbox = program.command('sandbox').description('start, exercise and remove sandboxes');
  sandbox
    .command('smoke')
    .description(
      'start a sandbox on a copy of a repository, run a few primitives through the daemon, show the diff, remove it',
    )
    .option('--repo <dir>', 'repository to copy in', parseRepo, '.')
    .option('--json', 'print the report as JSON')
    .action(async (o: { repo: string; json?: boolean }) => {
      process.exitCode = await smoke(o.repo, Boolean(o.json));
    });
  sandbox
    .command('up')
    .description('start a sandbox and keep it until interrupted (prints its ids as JSON)')
    .option('--repo <dir>', 'repository to copy in', parseRepo)
    .action(async (o: { repo?: string }) => {
      await sandboxUp(o.repo);
    });
  sandbox
    .command('reap')
    .description('remove sandboxes and networks left by dead orchestrators')
    .option('--all', 'also remove those of live orchestrators')
    .option('--run <run-id>', "only this run's sandboxes and egress proxies")
    .action(async (o: { all?: boolean; run?: string }) => {
      await reap(Boolean(o.all), o.run);
    });

  const STATE_DIR_HELP =
    'where runs are kept (default: $GATEHOUSE_STATE_DIR, else $XDG_STATE_HOME/gatehouse or ~/.local/state/gatehouse, ' +
    'by repository)';
  /** What every command that takes a run accepts. */
  const RUN_REF = 'run id, a unique prefix of one, or latest (the newest run of this repository)';

  // Said once per directory: runs of the older layout in ./.gatehouse/runs stay there (see legacy-notice.ts).
  program.hook('preAction', (_program, action) => {
    const o = action.opts<{ stateDir?: string; repo?: string }>();
    const notice = legacyRunsNotice(typeof o.repo === 'string' ? o.repo : process.cwd(), { stateDir: o.stateDir });
    if (notice) process.stderr.write(`gatehouse: ${notice}\n`);
  });
  // --docker-host (run, resume, plan, doctor): the engine, set before any Docker client exists.
  program.hook('preAction', (_program, action) => applyDockerHostOption(action));

  registerSessionCommands(program, { stateDirHelp: STATE_DIR_HELP, runRef: RUN_REF });
  registerReportCommand(program, { stateDirHelp: STATE_DIR_HELP, runRef: RUN_REF });
  registerReplayCommand(program, { stateDirHelp: STATE_DIR_HELP, runRef: RUN_REF });
  registerPlanCommand(program, { stateDirHelp: STATE_DIR_HELP, runRef: RUN_REF });
  registerQueueCommands(program);
  registerEvalCommand(program, { stateDirHelp: STATE_DIR_HELP });
  registerMcpCommand(program);
  registerMemoryCommands(program, { stateDirHelp: STATE_DIR_HELP });

  program
    .command('approvals')
    .description("a run's pending approval requests")
    .argument('<run>', RUN_REF)
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--store <url>', `${STORE_HELP}; the run is pulled from it first`)
    .option('--json', 'one JSON object per pending request and line')
    .action((run: string, o: { stateDir?: string; json?: boolean }) => {
      process.exitCode = approvalsCommand(run, o);
    });

  program
    .command('approve')
    .description('approve a pending request of a paused run (then: gatehouse resume RUN)')
    .argument('<run>', RUN_REF)
    .argument('<request>', 'request id (from gatehouse approvals RUN)')
    .option(
      '--scope <scope>',
      'once (this call) or run (the same action for the rest of the run)',
      parseScope,
      'once' as const,
    )
    .option('--reason <text>', 'why (recorded)')
    .option(
      '--on-behalf-of <who>',
      'whom this account answers for, recorded with it (e.g. a CI job for a maintainer)',
      parseOnBehalfOf,
    )
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--store <url>', `${STORE_HELP}; the answer is written to the run there`)
    .option('--json', 'print the recorded event as JSON')
    .option('--nats', "answer a live run over NATS (signed with --key; the run's policy must list the key)")
    .option('--key <file>', 'approver key file from `gatehouse approver keygen` (with --nats)')
    .action(
      async (
        run: string,
        request: string,
        o: {
          scope: 'once' | 'run';
          reason?: string;
          stateDir?: string;
          json?: boolean;
          nats?: boolean;
          key?: string;
          onBehalfOf?: string;
        },
      ) => {
        if (o.nats) {
          if (!o.key) throw new UsageError('--nats needs --key FILE');
          if (o.onBehalfOf)
            throw new UsageError('--on-behalf-of is for an answer written here; over NATS the key says who');
          process.exitCode = await answerOverNatsCommand(natsRunId(run, o.stateDir), request, {
            key: o.key,
            decision: 'grant',
            scope: o.scope,
            ...(o.reason ? { reason: o.reason } : {}),
          });
        } else process.exitCode = answerCommand(run, request, { ...o, decision: 'grant' });
      },
    );

  program
    .command('deny')
    .description('deny a pending request of a paused run; the reason is shown to the model')
    .argument('<run>', RUN_REF)
    .argument('<request>', 'request id')
    .requiredOption('--reason <text>', 'why (the model sees it)')
    .option('--on-behalf-of <who>', 'whom this account answers for, recorded with it', parseOnBehalfOf)
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--store <url>', `${STORE_HELP}; the answer is written to the run there`)
    .option('--json', 'print the recorded event as JSON')
    .option('--nats', 'answer a live run over NATS (signed with --key)')
    .option('--key <file>', 'approver key file (with --nats)')
    .action(
      async (
        run: string,
        request: string,
        o: { reason: string; stateDir?: string; json?: boolean; nats?: boolean; key?: string; onBehalfOf?: string },
      ) => {
        if (o.nats) {
          if (!o.key) throw new UsageError('--nats needs --key FILE');
          if (o.onBehalfOf)
            throw new UsageError('--on-behalf-of is for an answer written here; over NATS the key says who');
          process.exitCode = await answerOverNatsCommand(natsRunId(run, o.stateDir), request, {
            key: o.key,
            decision: 'deny',
            reason: o.reason,
          });
        } else process.exitCode = answerCommand(run, request, { ...o, decision: 'deny' });
      },
    );

  const approver = program
    .command('approver')
    .description('approvers who answer over NATS (a web page, a chat bot, another terminal)');
  approver
    .command('keygen')
    .description('create a signing key; prints the public part for the policy\'s "approvers" list')
    .argument('<name>', 'approver name, e.g. alice')
    .requiredOption('--out <file>', 'where to write the key (secret; created, never overwritten)')
    .action((name: string, o: { out: string }) => {
      process.exitCode = approverKeygen(name, o.out);
    });
  approver
    .command('creds')
    .description('NATS credentials that may only watch and answer approvals (of one run with --run)')
    .option('--run <run>', 'limit to one run')
    .option('--out <file>', 'write to a file instead of stdout')
    .action(async (o: { run?: string; out?: string }) => {
      process.exitCode = await approverCredsCommand(o);
    });

  program
    .command('policy')
    .description('permission policy')
    .command('check')
    .description(
      'print the decision, the matching rule and the reason for one tool call ' +
        '(or, with --batch, one per line), as JSON',
    )
    .option('--tool <name>', 'tool name, e.g. bash, or an MCP tool mcp__SERVER__TOOL')
    .option('--input <json>', 'the call\'s input, e.g. \'{"command":"npm test"}\'')
    .option('--annotations <json>', "an MCP tool's annotations, e.g. '{\"destructiveHint\":true}'")
    .option('--input-schema <json>', "an MCP tool's input schema, checked as a run checks it (default: any object)")
    .option(
      '--batch <file>',
      'JSON lines {"tool": ..., "input": ...} from FILE (- for stdin), one decision per line out; exit 1 if any ' +
        'line was bad',
    )
    .option('--policy <file>', 'policy file (default: REPO/.gatehouse/policy.json if present)')
    .option('--config <file>', 'project config, trusted whole, as for run (its policy and MCP servers count)')
    .option('--mode <mode>', Mode.options.join(' | '), parseMode)
    .option('--repo <dir>', 'repository whose default policy applies', parseRepo, '.')
    .action(async (o: Parameters<typeof policyCheckCommand>[0]) => {
      process.exitCode = await policyCheckCommand(o);
    });

  program
    .command('runs')
    .description("list this repository's runs, newest first (--all: every repository's)")
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--store <url>', `${STORE_HELP}; its runs are pulled into the state directory first`)
    .option('--all', 'every repository, each under its path')
    .option('--json', 'print as JSON')
    .action((o: { stateDir?: string; all?: boolean; json?: boolean }) => {
      process.exitCode = runsCommand(o);
    })
    .command('prune')
    .description('remove finished runs older than an age; paused, unfinished and live runs are kept (and said why)')
    .option('--older-than <age>', 'a whole number and d, h or m: 7d, 12h, 30m', DEFAULT_PRUNE_AGE)
    .option('--dry-run', 'only list what would be removed')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--all', "every repository's runs")
    .option('--json', 'print the report as JSON')
    .action((o: Parameters<typeof pruneCommand>[0]) => {
      process.exitCode = pruneCommand(o);
    });

  program
    .command('show')
    .description("a run's timeline, or with --tree the run and its sub-agents (exit 1 if their logs disagree)")
    .argument('<run>', RUN_REF)
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--tree', "the tree of agents: each one's status, actions, who allowed them, approvals")
    .option('--json', 'with --tree: print the tree as JSON')
    .option('--output', "also print each observation's text (what the model was shown), cut to 40 lines")
    .option('--store <url>', STORE_HELP)
    .action((runId: string, o: { stateDir?: string; tree?: boolean; json?: boolean; output?: boolean }) => {
      if (o.json && !o.tree) throw new UsageError('--json needs --tree');
      if (o.output && o.tree) throw new UsageError('--output is for the timeline, not --tree');
      process.exitCode = o.tree ? treeCommand(runId, o.stateDir, Boolean(o.json)) : showCommand(runId, o.stateDir, o);
    });

  program
    .command('nats')
    .description('a shared NATS server (see docker-compose.yml)')
    .command('init')
    .description('write nats.conf and identity.json (the keys that mint sandbox credentials) for a shared server')
    .option('--dir <dir>', 'where to write them', '.gatehouse/nats')
    .option('--force', 'overwrite an existing identity')
    .action(async (o: { dir: string; force?: boolean }) => {
      await natsInit(o.dir, Boolean(o.force));
    });

  program
    .command('verify')
    .description(
      "check a run's event log, its anchor and artifacts (exit 0 intact, 1 tampered or torn, 3 not anchored)",
    )
    .argument('<run>', RUN_REF)
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--json', 'print the result as JSON')
    .option(
      '--export <file>',
      'when intact, also write a statement of its head signed with the installation key (for auditors)',
    )
    .option('--statement <file>', 'check the log against a signed statement instead (no installation key needed)')
    .option('--store <url>', `${STORE_HELP}; the run is pulled (and checked) from it first`)
    .option(
      '--public-key <key>',
      'with --statement: the public key (or a file holding it) the statement must be signed by',
    )
    .action(async (run: string, o: Parameters<typeof verify>[1]) => {
      process.exitCode = await verify(run, o);
    });

  program
    .command('export')
    .description("write a run's event log as JSONL (stdout, or --out FILE); with --store, read from JetStream")
    .argument('<run>', RUN_REF)
    .option('--out <file>', 'write it to this file instead of stdout')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--store <url>', STORE_HELP)
    .action(async (run: string, o: { out?: string; stateDir?: string; store?: string }) => {
      process.exitCode = await exportCommand(run, o);
    });

  // --store on a command that reads a run: the run is pulled from JetStream into the state directory first.
  pullBeforeReading(program);
  answerThroughStore(program);
  return program;
}
