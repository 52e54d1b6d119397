import { existsSync } from 'node:fs';
import path from 'node:path';
import { createPolicy } from './engine';
import { compilePolicy, emptyPolicy, loadPolicyFile, type LoadedPolicy } from './file';
import { DEFAULT_MODE, type ApprovalPolicy, type Mode } from './mode';
import { loadShellClassifier } from './shell/index';

export { createPolicy } from './engine';
export { compilePolicy, emptyPolicy, loadPolicyFile, PolicyFile, PolicyFileError, type LoadedPolicy, type PolicyRule } from './file';
export { DEFAULT_MODE, Mode, modeRank, type ApprovalPolicy, type Decision, type PolicyRequest, type RunFacts, type SideEffect } from './mode';
export { parseRule, RuleSyntaxError } from './rules';
export { shapeOf } from './shape';
export { loadShellClassifier } from './shell/index';
export type { CommandClass, ShellAnalysis, ShellClassifier, SimpleCommand } from './shell/types';

/** Where a repository keeps its policy when --policy is not given. */
export const DEFAULT_POLICY_PATH = path.join('.gatehouse', 'policy.json');

export interface RunPolicy {
  policy: ApprovalPolicy;
  loaded: LoadedPolicy;
  /** As recorded in run.started. */
  record: { source: string; sha256: string; file: unknown };
}

/**
 * The policy a run is held to: `--policy FILE`, else the repository's `.gatehouse/policy.json` if
 * present, else no rules. The mode is `--mode`, else the file's, else confirm-novel.
 */
export async function resolveRunPolicy(opts: { policyFile?: string; repoDir: string; mode?: Mode }): Promise<RunPolicy> {
  const classifier = await loadShellClassifier();
  const repoDefault = path.join(opts.repoDir, DEFAULT_POLICY_PATH);
  const loaded = opts.policyFile ? loadPolicyFile(opts.policyFile, classifier) : existsSync(repoDefault) ? loadPolicyFile(repoDefault, classifier) : emptyPolicy(classifier);
  const mode = opts.mode ?? loaded.file.mode ?? DEFAULT_MODE;
  return { policy: createPolicy(loaded, mode, classifier), loaded, record: { source: loaded.source, sha256: loaded.sha256, file: loaded.file } };
}

/** A recorded policy (from run.started), for resume: the run stays held to what it started with. */
export async function recordedPolicy(record: { source: string; file: unknown } | undefined, mode: Mode): Promise<RunPolicy> {
  const classifier = await loadShellClassifier();
  const loaded = record ? compilePolicy(record.file, record.source, classifier) : emptyPolicy(classifier);
  return { policy: createPolicy(loaded, mode, classifier), loaded, record: { source: loaded.source, sha256: loaded.sha256, file: loaded.file } };
}

/** A policy with no rules: the mode decides everything. */
export async function modePolicy(mode: Mode): Promise<ApprovalPolicy> {
  const classifier = await loadShellClassifier();
  return createPolicy(emptyPolicy(classifier), mode, classifier);
}
