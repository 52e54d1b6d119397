import { existsSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, ConfigRefusedError, DEFAULT_CONFIG_PATH } from '../config/index';
import { readConfigFile } from '../config/read-config';
import { compilePolicy, DEFAULT_POLICY_PATH, loadPolicyFile, type PolicyFile } from '../policy/index';
import type { ShellClassifier } from '../policy/shell/types';

/** A policy that may only narrow the server's, with where it came from. */
export interface NarrowingPolicy {
  file: PolicyFile;
  source: string;
}

/**
 * Every policy besides the server's that reaches a run: the caller's config's `"policy"`, the
 * repository's `.gatehouse/policy.json` and its config's `"policy"`. All are untrusted (the caller
 * and the repository may both be hostile); combined-policy.ts takes from them only what narrows.
 * A file that is not valid stops the run before it starts, with every problem in it.
 */
export function narrowingPolicies(
  repoDir: string,
  callerConfig: string | undefined,
  classifier: ShellClassifier,
): NarrowingPolicy[] {
  const out: NarrowingPolicy[] = [];
  const repoPolicy = path.join(repoDir, DEFAULT_POLICY_PATH);
  if (existsSync(repoPolicy)) {
    noLinkedFolder(repoDir, repoPolicy);
    const loaded = loadPolicyFile(repoPolicy, classifier, { untrusted: true });
    out.push({ file: loaded.file, source: loaded.source });
  }
  const repoConfig = path.join(repoDir, DEFAULT_CONFIG_PATH);
  const configs = [...(existsSync(repoConfig) ? [repoConfig] : []), ...(callerConfig ? [callerConfig] : [])];
  for (const file of configs) {
    if (file === repoConfig) noLinkedFolder(repoDir, file);
    const read = readConfigFile(file, repoDir);
    if (read.problems.length > 0) throw new ConfigError(read.problems);
    if (read.policyFile) {
      const loaded = loadPolicyFile(read.policyFile, classifier, { untrusted: true });
      out.push({ file: loaded.file, source: loaded.source });
    } else if (typeof read.config?.policy === 'object') {
      const loaded = compilePolicy(read.config.policy, `${file} (policy)`, classifier);
      out.push({ file: loaded.file, source: loaded.source });
    }
  }
  return out;
}

/**
 * A repository's policy or config reached through a symbolic link could be anyone's file: refused.
 * The file itself is read as untrusted (read-plain-file.ts): the server reads it synchronously, so a
 * FIFO would block it for every caller, and a huge file would fill its memory.
 */
function noLinkedFolder(repoDir: string, file: string): void {
  const folder = path.dirname(file);
  if (lstatSync(folder).isSymbolicLink())
    throw new ConfigRefusedError(
      `${path.relative(repoDir, folder)} is a symbolic link; a repository's policy and config must be plain files`,
    );
}
