import { existsSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { createPolicy } from './engine';
import {
  compilePolicy,
  emptyPolicy,
  loadPolicyFile,
  PolicyFileError,
  type CompileOptions,
  type LoadedPolicy,
} from './file';
import { DEFAULT_MODE, type Mode } from './mode';
import { repositoryPolicy, type RepositoryPolicyPart } from './repository-policy';
import type { ApprovalPolicy } from './approval-policy';
import { loadShellClassifier } from './shell/index';
import type { ShellClassifier } from './shell/types';

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
  type ToolHints,
} from './approval-policy';
export { parseRule, RuleSyntaxError } from './rules';
export {
  isToolName,
  PLAN_TOOL_SUBJECTS,
  RULE_TOOL_NAMES,
  TOOL_NAMES,
  TOOL_SUBJECTS,
  type ToolName,
} from './tool-names';
export { planToolDefault } from './plan-tools';
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

/** A policy given as a file, or as an object written inline (a project config's `"policy"`). */
export type PolicySource = { file: string } | { inline: unknown; source: string };

/**
 * The policy a run is held to: `--policy FILE` or a `--config` file's policy (trusted: used whole),
 * else the repository's `.gatehouse/policy.json` and its config's policy, else no rules. The
 * repository is what the agent works on, so it may be untrusted, and an agent may have written
 * those files: from them only deny and ask rules and a stricter mode are taken — never allow
 * rules, approvers or a more permissive mode (repository-policy.ts). The mode is `--mode`, else
 * the policy's (as allowed), else confirm-novel.
 */
export async function resolveRunPolicy(opts: {
  policyFile?: string;
  /** A trusted policy given another way than --policy: the `--config` file's `"policy"`. */
  trustedPolicy?: PolicySource;
  /** The repository's own config's `"policy"`: as untrusted as `.gatehouse/policy.json`. */
  repoPolicy?: PolicySource;
  repoDir: string;
  mode?: Mode;
  /** The MCP servers the config declares (docs/mcp.md): when there are any, a rule naming another is refused. */
  mcpServers?: readonly string[];
}): Promise<RunPolicy> {
  if (opts.policyFile !== undefined && opts.trustedPolicy !== undefined)
    throw new PolicyFileError(
      `--policy ${opts.policyFile} and the --config file's "policy" both name the run's policy; give one of them`,
    );
  const classifier = await loadShellClassifier();
  const ignored: string[] = [];
  const compile: CompileOptions = opts.mcpServers?.length ? { mcpServers: opts.mcpServers } : {};
  const trusted: PolicySource | undefined = opts.policyFile ? { file: opts.policyFile } : opts.trustedPolicy;
  let loaded: LoadedPolicy;
  if (trusted) {
    loaded = loadSource(trusted, classifier, compile);
    if (opts.repoPolicy) ignored.push("the repository config's policy (a trusted policy was given)");
  } else {
    const parts: RepositoryPolicyPart[] = [];
    const repoDefault = path.join(opts.repoDir, DEFAULT_POLICY_PATH);
    if (existsSync(repoDefault)) {
      refuseSymlinks(opts.repoDir, repoDefault);
      parts.push({ full: loadPolicyFile(repoDefault, classifier, { ...compile, untrusted: true }), label: '' });
    }
    if (opts.repoPolicy)
      parts.push({
        full: loadSource(opts.repoPolicy, classifier, { ...compile, untrusted: true }),
        label: 'config policy: ',
      });
    if (parts.length === 0) loaded = emptyPolicy(classifier);
    else {
      const repo = repositoryPolicy(parts, classifier);
      loaded = repo.loaded;
      ignored.push(...repo.ignored);
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

function loadSource(source: PolicySource, classifier: ShellClassifier, opts: CompileOptions): LoadedPolicy {
  return 'file' in source
    ? loadPolicyFile(source.file, classifier, opts)
    : compilePolicy(source.inline, source.source, classifier, opts);
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
  const loaded = record
    ? compilePolicy(record.file, record.source, classifier, { recorded: true })
    : emptyPolicy(classifier);
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
