import { existsSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { createPolicy } from './engine';
import { compilePolicy, emptyPolicy, loadPolicyFile, PolicyFileError, type LoadedPolicy } from './file';
import { DEFAULT_MODE, modeRank, type Mode } from './mode';
import type { ApprovalPolicy } from './approval-policy';
import { loadShellClassifier } from './shell/index';

export { createPolicy } from './engine';
export {
  compilePolicy,
  emptyPolicy,
  loadPolicyFile,
  PolicyFile,
  PolicyFileError,
  type LoadedPolicy,
  type PolicyRule,
} from './file';
export { DEFAULT_MODE, Mode, modeRank } from './mode';
export {
  type ApprovalPolicy,
  type Decision,
  type PolicyRequest,
  type RunFacts,
  type SideEffect,
} from './approval-policy';
export { parseRule, RuleSyntaxError } from './rules';
export { pathDenial, type PathDenial } from './path-denial';
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
  /** What was not taken from an untrusted (repository) policy file, for the person to see. */
  ignored: string[];
}

/**
 * The policy a run is held to: `--policy FILE` (trusted: used whole), else the repository's
 * `.gatehouse/policy.json`, else no rules. The repository is what the agent works on, so it may
 * be untrusted, and an agent may have written that file: from it only deny and ask rules and a
 * stricter mode are taken — never allow rules, approvers or a more permissive mode. The mode is
 * `--mode`, else the file's (as allowed), else confirm-novel.
 */
export async function resolveRunPolicy(opts: {
  policyFile?: string;
  repoDir: string;
  mode?: Mode;
}): Promise<RunPolicy> {
  const classifier = await loadShellClassifier();
  const ignored: string[] = [];
  let loaded: LoadedPolicy;
  if (opts.policyFile) loaded = loadPolicyFile(opts.policyFile, classifier);
  else {
    const repoDefault = path.join(opts.repoDir, DEFAULT_POLICY_PATH);
    if (!existsSync(repoDefault)) loaded = emptyPolicy(classifier);
    else {
      refuseSymlinks(opts.repoDir, repoDefault);
      const full = loadPolicyFile(repoDefault, classifier);
      const f = full.file;
      if (f.allow.length) ignored.push(`${f.allow.length} allow rule(s)`);
      if (f.approvers.length) ignored.push(`${f.approvers.length} approver(s)`);
      const stricter = f.mode !== undefined && modeRank(f.mode) <= modeRank(DEFAULT_MODE);
      if (f.mode !== undefined && !stricter) ignored.push(`mode ${f.mode}`);
      loaded = compilePolicy(
        { ...f, allow: [], approvers: [], ...(stricter ? {} : { mode: undefined }) },
        `${repoDefault} (from the repository: deny and ask rules only)`,
        classifier,
      );
    }
  }
  const mode = opts.mode ?? loaded.file.mode ?? DEFAULT_MODE;
  return {
    policy: createPolicy(loaded, mode, classifier),
    loaded,
    record: { source: loaded.source, sha256: loaded.sha256, file: loaded.file },
    ignored,
  };
}

/** A policy reached through a symlink could be anyone's file: refused. */
function refuseSymlinks(repoDir: string, file: string): void {
  for (const p of [path.dirname(file), file]) {
    if (lstatSync(p).isSymbolicLink())
      throw new PolicyFileError(
        `${path.relative(repoDir, p)} is a symbolic link; a repository's policy must be a plain file (or pass ` +
          `--policy FILE)`,
      );
  }
}

/** A recorded policy (from run.started), for resume: the run stays held to what it started with. */
export async function recordedPolicy(
  record: { source: string; file: unknown } | undefined,
  mode: Mode,
): Promise<RunPolicy> {
  const classifier = await loadShellClassifier();
  const loaded = record ? compilePolicy(record.file, record.source, classifier) : emptyPolicy(classifier);
  return {
    policy: createPolicy(loaded, mode, classifier),
    loaded,
    record: { source: loaded.source, sha256: loaded.sha256, file: loaded.file },
    ignored: [],
  };
}

/** A policy with no rules: the mode decides everything. */
export async function modePolicy(mode: Mode): Promise<ApprovalPolicy> {
  const classifier = await loadShellClassifier();
  return createPolicy(emptyPolicy(classifier), mode, classifier);
}
