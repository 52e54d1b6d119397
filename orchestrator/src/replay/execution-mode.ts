import path from 'node:path';
import { newId, type EventDataOf } from '@gatehouse/shared';
import { createLogger } from '../cli/logger';
import { Mode } from '../policy/mode';
import { recordedPolicy } from '../policy/index';
import { loadShellClassifier } from '../policy/shell/index';
import { configFromRecord } from '../run/recorded-environment';
import { ensureRunImage, limitsFromConfig, resolveToolchainImage, SandboxDriver } from '../sandbox/index';
import { codingTools } from '../tools/builtin/index';
import { replayExecutions } from './execution-replay';
import { isReadOnlyExecution } from './read-only-call';
import { materializeBase, planBase, type BasePlan } from './recorded-base';
import { recordedExecutions, type RecordedExecution } from './recorded-executions';
import { ReplayError } from './replay-error';
import type { ReplayContext, ReplayModeRunner, ReplayOutcome } from './replay-types';

/**
 * `gatehouse replay RUN --mode execution [--allow-writes]`: the run's calls run again in a fresh
 * sandbox made from its recorded base (recorded-base.ts), and their results compared with the
 * recorded ones (execution-replay.ts). The repository is only read (git's read-only commands, the
 * usual copy-in); the sandbox is the replay's own and is removed at the end.
 */
export const executionMode: ReplayModeRunner = {
  async prepare(recorded, options) {
    const first = recorded[0];
    if (first?.type !== 'run.started') throw new ReplayError('refused', 'the log does not begin with run.started');
    if (first.parentRunId) {
      throw new ReplayError(
        'refused',
        `run ${first.runId} is a sub-agent: its sandbox started from its parent's workspace, not from a repository; ` +
          `replay the root run (${first.data.lineage?.[0] ?? String(first.parentRunId)})`,
      );
    }
    const base = planBase(first.runId, first.data);
    const policy = await recordedPolicy(first.data.policy, Mode.parse(first.data.mode));
    const classifier = await loadShellClassifier();
    const registry = codingTools();
    const calls = recordedExecutions(recorded);
    const isReadOnly = (c: RecordedExecution) => isReadOnlyExecution(registry, classifier, c);
    return {
      record: { allowWrites: options.allowWrites === true },
      run: (ctx) => reexecute(ctx, first.data, base, policy.policy.paths, calls, isReadOnly),
    };
  },
};

async function reexecute(
  ctx: ReplayContext,
  started: EventDataOf<'run.started'>,
  base: BasePlan,
  pathRules: Awaited<ReturnType<typeof recordedPolicy>>['policy']['paths'],
  calls: RecordedExecution[],
  isReadOnly: (c: RecordedExecution) => boolean,
): Promise<ReplayOutcome> {
  const config = configFromRecord(started.config);
  if (config && config.setup.length > 0) {
    ctx.say(
      `the run's setup (${config.setup.length} command(s)) is not run again: a replay reaches no network and has ` +
        'no setup secrets, so calls that need what setup installed will drift',
    );
  }
  ctx.say(
    base.kind === 'repository'
      ? `base: ${base.repoDir} as it is, which is what it held when the run started`
      : `base: tree ${base.tree}, exported from ${base.repoDir} (the repository has moved on since the run)`,
  );
  const { dir, cleanup } = await materializeBase(base);
  const driver = await SandboxDriver.start({ log: createLogger(), reap: false });
  try {
    const image = config
      ? await ensureRunImage(await resolveToolchainImage(config.image), { prune: false })
      : undefined;
    const ignore = base.kind === 'repository' ? stateDirIgnore(dir, ctx.options.stateDir) : undefined;
    const sandbox = await driver.createSandbox({
      runId: ctx.replayRunId ?? newId('run'),
      repoDir: dir,
      // No stateDir: an orphan of a replay is removed by the reaper, never saved into a run.
      salvage: false,
      ...(ignore ? { ignore } : {}),
      ...(image ? { image } : {}),
      ...(config ? { copy: { exclude: [...config.copy.exclude], include: [...config.copy.include] } } : {}),
      ...(config ? { limits: limitsFromConfig(config.limits) } : {}),
      ...(pathRules ? { pathRules } : {}),
    });
    try {
      return await replayExecutions(calls, {
        sandbox,
        isReadOnly,
        allowWrites: ctx.options.allowWrites === true,
        log: ctx.log,
        signal: ctx.signal,
        say: (line) => ctx.say(line),
      });
    } finally {
      await sandbox.destroy().catch(() => undefined);
    }
  } finally {
    await driver.close().catch(() => undefined);
    cleanup();
  }
}

/** When runs are kept inside the repository, their logs stay out of the copy, as they did for the run. */
function stateDirIgnore(repoDir: string, stateDir: string): ((rel: string) => boolean) | undefined {
  const rel = path.relative(repoDir, stateDir);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const prefix = rel.split(path.sep).join('/');
  return (p: string) => p === prefix || p.startsWith(`${prefix}/`);
}
