import { readFileSync } from 'node:fs';
import path from 'node:path';
import { newId, type EventEnvelope } from '@gatehouse/shared';
import { resolveRun } from '../events/run-ref';
import { explicitStateDir, realRepoPath, stateDirForRun } from '../events/state-home';
import { repoTree } from '../run/repo-tree';
import { checkResumeRepo } from '../run/resume-repo';
import { startedByWorker } from './worker-link';
import { RunLog } from '../events/store';
import { assertRunId } from '../events/paths';
import { resumeAgent, ResumeError } from '../run/resume';
import { runAgent } from '../run/session';
import type { AgentRunResult, RunEnvironment } from '../run/types';
import { createLogger } from './logger';
import type { OnAsk } from '../approval/channels/headless';
import { recordedPolicy, resolveRunPolicy, type RunPolicy } from '../policy/index';
import { Mode } from '../policy/mode';
import { createProvider } from '../providers/index';
import { assertDockerReachable, SandboxDriver } from '../sandbox/index';
import { reapOrphans } from '../sandbox/reaper';
import { chooseChannel } from './channel';
import { oneLine } from '../approval/channels/screen';
import { treePending } from './approvals';
import { pausedLines } from './paused-lines';
import type { LogPort } from '../tools/ports';
import { humanProgress } from './progress';
import { planProgressLine } from './plan-progress';
import { onOutputClosed } from './closed-output';
import { exitCodeFor } from './exit-codes';
import { SETUP_FAILED } from '../run/types';
import { configFromRecord } from '../run/recorded-environment';
import { mcpServersForResume } from '../mcp/recorded-servers';
import { resumeConfigMcp } from './resume-config';
import { loadRunConfig, runBudgets } from './run-config';
import { DEFAULT_BUDGETS } from '../run/budgets';
import { priceFor } from '../usage/price-for';
import { requirePrice } from '../usage/require-price';
import { FLAG_OF, resumeBudgets } from './resume-budgets';
import { usageLine } from './usage-line';
import { startTelemetry } from '../telemetry/start-telemetry';
import { packageVersion } from '../sandbox/paths';
import { openChosenStore } from './store-flag';
import { openRunMemory } from '../memory/recall-for-run';
import { UsageError } from './usage';
import { checkRepositoryPin } from '../mcp-server/repository-pin';

export interface RunFlags {
  repo: string;
  model: string;
  mode?: Mode;
  policy?: string;
  onAsk: OnAsk;
  maxTurns: number;
  maxToolCalls: number;
  /** `--max-tokens`, `--max-cost` (US dollars), `--max-wall` (ms): absent when not given. */
  maxTokens?: number;
  maxCost?: number;
  maxWall?: number;
  stateDir?: string;
  /** `--store URL` (or GATEHOUSE_STORE): the JetStream event store every event is written through to. */
  store?: string;
  json?: boolean;
  apply?: boolean;
  approvalWait: number;
  /** `--config FILE`: the trusted project config (default: the repository's, narrowing the defaults). */
  config?: string;
  /** `--image IMAGE`: over any config's image. */
  image?: string;
  /** `--check CMD`: over any config's check (resume uses the one the run recorded). */
  check?: string;
  /** `--setup-env NAME`, repeated: variables passed to setup only. */
  setupEnv?: string[];
  /** `--run-id ID`: the id a queue's worker starts the run under (RunLog.create refuses one that exists). */
  runId?: string;
  /** Which budget flags were given on the command line (not defaults): those win over the config's. */
  explicit?: { maxTurns: boolean; maxToolCalls: boolean };
  /** `--memory`: recall remembered records into the context and offer `remember` (docs/memory.md). */
  memory?: boolean;
  /** `--memory-budget N`: estimated tokens the recalled records may take. */
  memoryBudget?: number;
  /** `--repo-pin DEV:INO` (mcp serve): --repo must still be the folder the server checked. */
  repoPin?: string;
}

export type ResumeFlags = Pick<
  RunFlags,
  | 'onAsk'
  | 'maxTurns'
  | 'maxToolCalls'
  | 'maxTokens'
  | 'maxCost'
  | 'maxWall'
  | 'stateDir'
  | 'store'
  | 'json'
  | 'apply'
  | 'approvalWait'
  | 'explicit'
> & {
  /** The repository the run is expected to work on (it must be the one the run recorded). */
  repo?: string;
  /** `--config FILE`: the trusted config the run started with, for what its log does not keep (MCP env, headers). */
  config?: string;
};

/** `gatehouse run TASK`, and `gatehouse plan GOAL` (planMode: plan, gate, execute the approved plan). */
export async function runCommand(task: string, flags: RunFlags, opts: { planMode?: boolean } = {}): Promise<number> {
  if (flags.repoPin !== undefined) checkRepositoryPin(flags.repo, flags.repoPin);
  // Everything a person must fix (model spec, key, config, policy file) fails here, before anything starts.
  const provider = createProvider(flags.model);
  const { config, setupEnv, policy: configPolicy } = loadRunConfig(flags);
  const policy = await resolveRunPolicy({
    repoDir: flags.repo,
    ...(flags.policy ? { policyFile: flags.policy } : {}),
    ...configPolicy,
    ...(flags.mode ? { mode: flags.mode } : {}),
    ...(config.mcp ? { mcpServers: Object.keys(config.mcp) } : {}),
  });
  if (policy.ignored.length > 0)
    process.stderr.write(
      `gatehouse: not taken from the repository's policy (pass --policy FILE to trust it): ` +
        `${policy.ignored.join(', ')}\n`,
    );
  // A worker names the run (the queue's job carries its id); anyone else gets a fresh one.
  if (flags.runId !== undefined) assertRunId(flags.runId);
  const runId = flags.runId ?? newId('run');
  const budgets = runBudgets(flags, config);
  const price = priceFor(flags.model, config.prices);
  requirePrice(flags.model, budgets, price);
  // Recorded as its real absolute path: resume finds it from anywhere, and knows a different one.
  const repoDir = realRepoPath(flags.repo);
  const stateDir = stateDirForRun(repoDir, { flag: flags.stateDir });
  const tree = repoTree(repoDir);
  if (flags.memoryBudget !== undefined && !flags.memory) throw new UsageError('--memory-budget needs --memory');
  const memory = flags.memory
    ? await openRunMemory({ repoDir, stateDir: flags.stateDir, tokenBudget: flags.memoryBudget })
    : undefined;
  return session(flags, stateDir, runId, policy, (env) =>
    runAgent({
      ...env,
      budgets,
      ...(price ? { price } : {}),
      projectConfig: config,
      ...(Object.keys(setupEnv).length > 0 ? { setupEnv } : {}),
      runId,
      task,
      repoDir,
      ...(tree ? { repoTree: tree } : {}),
      modelSpec: recordedSpec(flags.model),
      provider,
      ...(opts.planMode ? { planMode: true } : {}),
      ...(memory ? { memory } : {}),
    }),
  );
}

/** `gatehouse resume RUN`: the same run, held to the policy, mode and model it started with. */
export async function resumeCommand(ref: string, flags: ResumeFlags): Promise<number> {
  const { stateDir, runId } = resolveRun(ref, flags);
  const events = RunLog.readEvents(stateDir, runId);
  const started = events[0]?.type === 'run.started' ? events[0].data : undefined;
  if (started?.replay)
    throw new ResumeError(
      `run ${runId} is a replay (${started.replay.mode}) of ${started.replay.of}; a replay is not resumed: replay ` +
        `the run again (gatehouse replay ${started.replay.of} --mode ${started.replay.mode})`,
    );
  if (!started?.model) throw new ResumeError(`run ${runId} does not record its model; it cannot be resumed`);
  // A sub-agent is resumed by its root, held to its handoff; on its own it would lose that scope.
  const root = started.lineage?.[0];
  if (events[0]?.parentRunId || (root && root !== runId))
    throw new ResumeError(
      `run ${runId} is a sub-agent of ${root ?? String(events[0]?.parentRunId)}: resume the root run (gatehouse ` +
        `resume ${root ?? String(events[0]?.parentRunId)}), which resumes its sub-agents`,
    );
  const { warning } = checkResumeRepo(runId, started, {
    repo: flags.repo,
    checkCwd: explicitStateDir(flags.stateDir) === undefined,
    treeMustMatch: startedByWorker(),
  });
  if (warning) process.stderr.write(`gatehouse: ${warning}\n`);
  const provider = createProvider(started.model);
  const policy = await recordedPolicy(started.policy, Mode.parse(started.mode));
  const recorded = configFromRecord(started.config);
  // Its MCP servers as they started, their env and header values from the config given now (docs/mcp.md).
  const mcp = mcpServersForResume(runId, started.config?.environment?.mcp, resumeConfigMcp(flags.config));
  const projectConfig = recorded && mcp ? { ...recorded, mcp } : recorded;
  // The run keeps the budgets and price it started with, unless a budget flag given now says otherwise.
  const { budgets, price } = resumeBudgets(stateDir, runId, started, events, flags);
  // A run started with --memory keeps it: a remember call it paused on can be stored once granted.
  const memory = started.surface.includes('remember')
    ? await openRunMemory({ repoDir: started.repo ?? '.', stateDir: flags.stateDir })
    : undefined;
  return session(
    flags,
    stateDir,
    runId,
    policy,
    (env) =>
      resumeAgent(runId, {
        ...env,
        provider,
        budgets,
        ...(price ? { price } : {}),
        // The sandboxes are made as at the start; setup secrets are not kept, so a setup that must
        // run again (its cache gone) runs without them.
        ...(projectConfig ? { projectConfig } : {}),
        ...(memory ? { memory } : {}),
      }),
    { reap: false },
  );
}

async function session(
  flags: ResumeFlags,
  stateDir: string,
  runId: string,
  policy: RunPolicy,
  start: (env: Omit<RunEnvironment, 'provider'>) => Promise<AgentRunResult>,
  driverOpts: { reap?: boolean } = {},
): Promise<number> {
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  const shown = flags.json ? (e: EventEnvelope) => out(JSON.stringify(e)) : humanProgress(out);
  // Plan runs' tasks on stderr (cli/plan-progress.ts); other runs have no plan events.
  const print = (e: EventEnvelope): void => {
    shown(e);
    const line = planProgressLine(e);
    if (line !== undefined) process.stderr.write(`${line}\n`);
  };
  // Spans only when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set; otherwise nothing is loaded (docs/telemetry.md).
  const telemetry = await startTelemetry(process.env, {
    version: packageVersion(),
    warn: (m) => void process.stderr.write(`gatehouse: ${m}\n`),
  });
  const onEvent = telemetry
    ? (e: EventEnvelope) => {
        print(e);
        telemetry.onEvent(e);
      }
    : print;
  // The reader went away (`| head`): the run goes on to its end unprinted, its log whole (docs/cli.md).
  const unwatch = onOutputClosed((which) => {
    if (which === 'stdout')
      process.stderr.write(
        `gatehouse: nothing reads the output any more; run ${runId} goes on without printing (gatehouse show ` +
          `${runId} shows it; Ctrl-C cancels it)\n`,
      );
  });
  const controller = new AbortController();
  // First Ctrl-C: cancel cleanly (sandbox removed, log completed). A second one: leave now; the
  // next start reaps the sandbox. Either way the exit code says "cancelled".
  const cancel = (): void => {
    if (controller.signal.aborted) process.exit(exitCodeFor('cancelled'));
    if (!flags.json) process.stderr.write('cancelling… (Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', cancel);
  process.on('SIGTERM', cancel);
  // First: an engine that does not answer is named (--docker-host, DOCKER_HOST), before anything else asks it.
  await assertDockerReachable();
  // Orphans of dead orchestrators are saved into their runs' folders here, then removed.
  if (driverOpts.reap !== false) await reapOrphans(undefined, false, { stateDir, ownStateDirOnly: true });
  // Before the sandbox: a store that cannot be reached stops the command with nothing started.
  const store = await openChosenStore(flags.store, stateDir);
  const driver = await SandboxDriver.start({ log: createLogger(), reap: false });
  let storeFailure: Error | undefined;
  let runLog: LogPort | undefined;
  let channel: ReturnType<typeof chooseChannel> | undefined;
  let result: AgentRunResult;
  try {
    channel = chooseChannel({
      runId,
      json: Boolean(flags.json),
      onAsk: flags.onAsk,
      approvers: policy.loaded.file.approvers,
      nc: driver.nc,
      natsWaitMs: flags.approvalWait * 1000,
      onRejected: (reason, requestId) => {
        process.stderr.write(`gatehouse: refused an approval answer: ${reason}\n`);
        // Refused answers are part of the audit trail too: who tried to approve what, and why not.
        runLog?.append('approval.rejected', 'runtime', {
          requestId: requestId ?? 'unknown',
          channel: 'nats',
          reason: reason.slice(0, 1000),
        });
      },
    });
    result = await start({
      driver,
      stateDir,
      policy: policy.policy,
      policyRecord: policy.record,
      channel,
      budgets: {
        maxTurns: flags.maxTurns,
        maxToolCalls: flags.maxToolCalls,
        maxTokens: flags.maxTokens ?? DEFAULT_BUDGETS.maxTokens,
        wallClockMs: flags.maxWall ?? DEFAULT_BUDGETS.wallClockMs,
        ...(flags.maxCost !== undefined ? { maxCostUsd: flags.maxCost } : {}),
      },
      apply: Boolean(flags.apply),
      signal: controller.signal,
      onEvent,
      // Setup's output as it comes (redacted), on stderr so --json's stdout stays events only.
      ...(flags.json ? {} : { onSetupOutput: setupPrinter((line) => process.stderr.write(line)) }),
      attachLog: (log) => (runLog = log),
      ...(store ? { eventStore: store } : {}),
    });
  } finally {
    unwatch();
    process.off('SIGINT', cancel);
    process.off('SIGTERM', cancel);
    await channel?.close?.();
    await driver.close();
    await telemetry?.end();
    // Every event, file and head of the run is in the store (or why not) before the command ends.
    await store?.close().catch((e: unknown) => void (storeFailure = e instanceof Error ? e : new Error(String(e))));
    // Resume starts without reaping (it salvages its own run's sandbox first); the rest now.
    if (driverOpts.reap === false)
      await reapOrphans(undefined, false, { stateDir, ownStateDirOnly: true }).catch(() => undefined);
  }
  if (!flags.json) summary(result, flags, out);
  if (storeFailure !== undefined) throw storeFailure;
  return exitCodeFor(result.stopReason.startsWith(SETUP_FAILED) ? 'setup_failed' : result.status);
}

/** A scripted model's path is recorded absolute, so `gatehouse resume` works from any directory. */
function recordedSpec(spec: string): string {
  const m = /^scripted:(.*)$/i.exec(spec.trim());
  return m?.[1] ? `scripted:${path.resolve(m[1].trim())}` : spec;
}

/** A path relative to here when it is below here, else absolute (runs live in the user's state directory). */
function shown(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? p : rel;
}

function summary(r: AgentRunResult, flags: ResumeFlags, out: (l: string) => void): void {
  out('');
  if (r.status === 'paused') {
    const pending = treePending(path.dirname(path.dirname(r.runDir)), r.runId);
    for (const line of pausedLines(r.runId, pending)) out(line);
    out(`log: ${shown(r.runDir)}`);
    return;
  }
  out(`outcome: ${r.status} (${r.stopReason})`);
  if (r.decidedBy === 'budget') {
    const flag = FLAG_OF[r.stopReason as keyof typeof FLAG_OF] ?? 'budget flag';
    out(`stopped on a budget, the changes kept: gatehouse resume ${r.runId} ${flag} MORE continues it`);
  }
  if (r.answer) out(`answer: ${r.answer}`);
  if (r.usage) out(`usage: ${usageLine(r.usage)}`);
  if (r.filesChanged.length === 0) out('files changed: none');
  else {
    out(`files changed: ${r.filesChanged.join(', ')}`);
    if (r.diffFile) out(readFileSync(r.diffFile, 'utf8').trimEnd());
    for (const f of r.refused ?? []) out(`refused: ${oneLine(f.path)}: ${oneLine(f.reason)}`);
    for (const f of r.skipped ?? []) out(`skipped: ${oneLine(f.path)} (${f.size} bytes): ${oneLine(f.reason)}`);
    if (r.applyError) out(`apply failed: ${oneLine(r.applyError)}`);
    if (r.refused?.length && flags.apply) out('not applied: nothing was written because of the refused files above');
    out(
      r.applied
        ? `applied to ${r.repoDir}`
        : `not applied: the repository is untouched; the diff is in ` +
            `${shown(r.diffFile ?? r.runDir)}` +
            `${flags.apply ? '' : ' (use --apply to write it back)'}`,
    );
  }
  out(`log: ${shown(r.runDir)}  (gatehouse show ${r.runId}, gatehouse verify ` + `${r.runId})`);
}

/**
 * Prints setup output line by line (chunks split lines anywhere), indented under its step, with
 * control characters other than tab made visible: the output is the repository's, not ours.
 */
function setupPrinter(write: (s: string) => void): (text: string) => void {
  let partial = '';
  const controls = /[\u0000-\u0008\u000b-\u001f\u007f]/g;
  return (text) => {
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines)
      write(`    │ ${line.replace(controls, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}\n`);
  };
}
