import type { PolicyRule } from './file';

/**
 * The policy's path rules in the form the sandbox enforces them with the file system: paths denied
 * for reading are never copied in, paths denied for writing are not writable by the command user.
 * Only deny rules with a pattern count: `deny read_file` alone means "do not use this tool", not
 * "these files are secret". Writing is denied by `write_file(…)` or `edit_file(…)` deny rules.
 */
export interface PathDenial {
  readDenied(path: string): boolean;
  writeDenied(path: string): boolean;
  /** Whether every path under `dir` is denied (so the directory itself is withheld or locked). */
  readDeniedBelow(dir: string): boolean;
  writeDeniedBelow(dir: string): boolean;
}

/**
 * A name no rule is written for: a pattern that matches `dir/<probe>` matches whatever is
 * created under `dir` (`secrets/**`, `test/*`), which is what makes the directory denied as a whole.
 */
const PROBE = '\u0007gatehouse-probe\u0007';

export function pathDenial(rules: readonly PolicyRule[]): PathDenial {
  const tests = (tools: string[]): Array<(p: string) => boolean> =>
    rules
      .filter((r) => r.list === 'deny' && tools.includes(r.tool) && r.test)
      .map((r) => r.test as (p: string) => boolean);
  const read = tests(['read_file']);
  const write = tests(['write_file', 'edit_file']);
  const any = (list: Array<(p: string) => boolean>, p: string): boolean => list.some((t) => t(p));
  return {
    readDenied: (p) => any(read, p),
    writeDenied: (p) => any(write, p),
    readDeniedBelow: (dir) => any(read, `${dir === '.' ? '' : `${dir}/`}${PROBE}`),
    writeDeniedBelow: (dir) => any(write, `${dir === '.' ? '' : `${dir}/`}${PROBE}`),
  };
}

/** Nothing denied: for runs without a policy file. */
export const NO_PATH_DENIAL: PathDenial = pathDenial([]);
