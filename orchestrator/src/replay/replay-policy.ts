import { existsSync, statSync } from 'node:fs';
import { isEvent, type EventEnvelope } from '@gatehouse/shared';
import { narrowPolicy } from '../agents/narrow';
import { loadRunConfig } from '../cli/run-config';
import { GatehouseError } from '../errors';
import { createPolicy, loadShellClassifier, Mode, resolveRunPolicy, type ApprovalPolicy } from '../policy/index';
import { ReplayError } from './replay-error';

/** The policy a dry-run decides with, and what run.started.replay records of it. */
export interface ReplayPolicy {
  policy: ApprovalPolicy;
  source: string;
  sha256: string;
}

/**
 * The policy a dry-run decides the recorded calls with: `--policy FILE` (trusted whole, as
 * `gatehouse run --policy FILE` takes it), else the one `gatehouse run --repo REPO` would load today
 * for the repository the run recorded — its `.gatehouse/config.json` and `.gatehouse/policy.json`,
 * read by the same code (cli/run-config.ts, policy/index.ts). The mode is the policy's own when it
 * names one, else the mode the run was recorded with. A sub-agent's policy is narrowed to the
 * paths it was handed, as it was when it ran (agents/narrow.ts).
 *
 * Whatever stops the policy loading (no such file, a bad rule, the repository gone) is a usage
 * error that says what to pass instead; it is raised before the replay's own log exists.
 */
export async function replayPolicy(recorded: readonly EventEnvelope[], policyFile?: string): Promise<ReplayPolicy> {
  const first = recorded[0];
  if (!first || !isEvent(first, 'run.started')) throw new ReplayError('refused', 'the run has no run.started event');
  const started = first.data;
  let loaded;
  try {
    loaded = policyFile !== undefined ? await givenPolicy(policyFile) : await todaysPolicy(first.runId, started.repo);
  } catch (e) {
    if (e instanceof ReplayError) throw e;
    if (e instanceof GatehouseError && (e.kind === 'usage' || e.kind === 'refused'))
      throw new ReplayError('usage', `the policy to replay against could not be loaded: ${e.message}`);
    throw e;
  }
  const recordedMode = Mode.safeParse(started.mode);
  let policy = loaded.policy;
  // The run's mode stands unless the policy says otherwise: a dry-run compares rules, not how the run was started.
  if (loaded.loaded.file.mode === undefined && recordedMode.success && recordedMode.data !== policy.mode)
    policy = createPolicy(loaded.loaded, recordedMode.data, await loadShellClassifier());
  const spawned = recorded.find((e) => isEvent(e, 'agent.spawned') && e.data.childRunId === first.runId);
  if (spawned && isEvent(spawned, 'agent.spawned')) policy = narrowPolicy(policy, spawned.data.paths);
  return { policy, source: loaded.record.source, sha256: loaded.record.sha256 };
}

function givenPolicy(file: string) {
  if (!existsSync(file) || !statSync(file).isFile())
    throw new ReplayError('usage', `--policy ${file}: there is no such file; give the path of a policy file`);
  return resolveRunPolicy({ policyFile: file, repoDir: '.' });
}

function todaysPolicy(runId: string, repo: string | undefined) {
  if (repo === undefined)
    throw new ReplayError(
      'usage',
      `run ${runId} records no repository, so there is no policy it would load today; pass --policy FILE`,
    );
  if (!existsSync(repo) || !statSync(repo).isDirectory())
    throw new ReplayError(
      'usage',
      `${repo}, the repository run ${runId} worked on, is gone, so there is no policy it would load today; pass ` +
        '--policy FILE to decide with a policy file',
    );
  // Exactly what `gatehouse run --repo REPO` loads: its config (whose policy may be inline), then the policy.
  const { policy } = loadRunConfig({ repo, maxTurns: 1, maxToolCalls: 1 });
  return resolveRunPolicy({ repoDir: repo, ...policy });
}
