import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { defaultStateRoot, explicitStateDir, groupName, realRepoPath, reposDir, type Env } from '../events/state-home';

/**
 * Runs used to be kept in `.gatehouse/runs` of the directory gatehouse ran in; that folder now
 * holds only configuration (policy.json, config.json). Runs found there are neither moved nor
 * hidden: the first command run in that directory with the default state directory says, once
 * (a marker in the state directory remembers it), where runs live now and how to reach the old ones.
 * Returns the notice, or undefined when there is nothing (more) to say.
 */
export function legacyRunsNotice(
  dir: string,
  o: { stateDir?: string | undefined; env?: Env } = {},
): string | undefined {
  const env = o.env ?? process.env;
  if (explicitStateDir(o.stateDir, env) !== undefined) return undefined;
  const old = path.join(dir, '.gatehouse', 'runs');
  let count: number;
  try {
    count = readdirSync(old).length;
  } catch {
    return undefined;
  }
  if (count === 0) return undefined;
  let root: string;
  try {
    root = defaultStateRoot(env);
  } catch {
    return undefined; // the command itself says what is wrong with the state directory, if it needs one
  }
  const marker = path.join(root, 'notices', `legacy-runs-${groupName(realRepoPath(dir))}`);
  if (existsSync(marker)) return undefined;
  try {
    mkdirSync(path.dirname(marker), { recursive: true, mode: 0o700 });
    writeFileSync(marker, `${old}\n`);
  } catch {
    // Not remembered: said again next time, which is better than not at all.
  }
  return (
    `runs are now kept outside the repository, in ${reposDir(root)}/ (one folder per repository). ` +
    `The ${count} older run folder(s) in ${old} stay where they are: read them with --state-dir .gatehouse ` +
    `(e.g. gatehouse runs --state-dir .gatehouse), and remove that folder when you no longer need them.`
  );
}
