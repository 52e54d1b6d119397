import { compilePolicy, type LoadedPolicy, type PolicyFile } from './file';
import { DEFAULT_MODE, modeRank, type Mode } from './mode';
import type { ShellClassifier } from './shell/types';

/** A policy the repository supplied, as loaded, and how its ignored parts are named. */
export interface RepositoryPolicyPart {
  full: LoadedPolicy;
  /** Put before each ignored item: '' for .gatehouse/policy.json, `config policy: ` for the config's. */
  label: string;
}

/**
 * The part of the repository's policies a run may take (docs/decisions/0006): deny and ask rules
 * and a mode no more permissive than the default. Allow rules, approvers and a wider mode are left
 * out and listed. Two parts (the policy file and the project config's policy) are joined: their
 * rules together, the stricter of their modes.
 */
export function repositoryPolicy(
  parts: readonly RepositoryPolicyPart[],
  classifier: ShellClassifier,
): { loaded: LoadedPolicy; ignored: string[] } {
  const ignored: string[] = [];
  const kept = parts.map(({ full, label }) => {
    const f = full.file;
    if (f.allow.length) ignored.push(`${label}${f.allow.length} allow rule(s)`);
    if (f.approvers.length) ignored.push(`${label}${f.approvers.length} approver(s)`);
    const stricter = f.mode !== undefined && modeRank(f.mode) <= modeRank(DEFAULT_MODE);
    if (f.mode !== undefined && !stricter) ignored.push(`${label}mode ${f.mode}`);
    const file: PolicyFile = { ...f, allow: [], approvers: [], ...(stricter ? {} : { mode: undefined }) };
    return { file, source: full.source };
  });
  const note = '(from the repository: deny and ask rules only)';
  if (kept.length === 1) {
    const [only] = kept as [(typeof kept)[0]];
    return { loaded: compilePolicy(only.file, `${only.source} ${note}`, classifier), ignored };
  }
  const modes = kept.map((k) => k.file.mode).filter((m): m is Mode => m !== undefined);
  const mode = modes.sort((a, b) => modeRank(a) - modeRank(b))[0];
  const joined = {
    ...(mode ? { mode } : {}),
    deny: kept.flatMap((k) => k.file.deny),
    ask: kept.flatMap((k) => k.file.ask),
  };
  return { loaded: compilePolicy(joined, `${kept.map((k) => k.source).join(' + ')} ${note}`, classifier), ignored };
}
