import { listRuns, type RunSummary } from '../events/runs';
import { pruneRuns, type PruneReport } from '../events/prune';
import { currentGroup, defaultStateRoot, explicitStateDir, listGroups, realRepoPath } from '../events/state-home';
import { UsageError } from './usage';

/** The state directories a listing or prune covers: the explicit one, the current repository's group, or all. */
function scopes(o: {
  stateDir?: string | undefined;
  all?: boolean | undefined;
}): Array<{ dir: string; repo?: string }> {
  const explicit = explicitStateDir(o.stateDir);
  if (explicit !== undefined) return [{ dir: explicit }];
  const root = defaultStateRoot();
  if (o.all) return listGroups(root).map((g) => ({ dir: g.dir, ...(g.repo ? { repo: g.repo } : {}) }));
  const here = currentGroup(root);
  return here ? [{ dir: here.dir, ...(here.repo ? { repo: here.repo } : {}) }] : [];
}

const newestFirst = (a: RunSummary, b: RunSummary): number => String(b.startedAt).localeCompare(String(a.startedAt));

/**
 * `gatehouse runs [--all]`: one line per run, newest first: the current repository's runs (or
 * those of the explicit state directory), or with --all every repository's, under its path.
 */
export function runsCommand(o: { stateDir?: string; all?: boolean; json?: boolean }): number {
  const groups = scopes(o).map((s) => ({ ...s, runs: listRuns(s.dir).sort(newestFirst) }));
  if (o.json) {
    // Without --all the shape is what it always was: an array of runs.
    const json = o.all ? groups.map((g) => ({ repo: g.repo ?? null, stateDir: g.dir, runs: g.runs })) : groups[0]?.runs;
    process.stdout.write(`${JSON.stringify(json ?? [])}\n`);
    return 0;
  }
  const out = (l: string): void => void process.stdout.write(`${l}\n`);
  if (groups.every((g) => g.runs.length === 0)) {
    out(o.all || o.stateDir ? 'no runs yet' : `no runs yet for ${realRepoPath(process.cwd())}`);
    if (!o.all && explicitStateDir(o.stateDir) === undefined) out('(gatehouse runs --all lists every repository)');
  }
  for (const g of groups) {
    if (g.runs.length === 0) continue;
    if (o.all) out(`${g.repo ?? '(unknown repository)'}  (${g.dir})`);
    for (const r of g.runs)
      out(`${o.all ? '  ' : ''}${r.runId}  ${r.startedAt ?? '?'}  ${r.status ?? r.lastType ?? '?'}`);
  }
  return 0;
}

const AGE = /^(\d{1,6})([dhm])$/;
const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** `7d`, `12h`, `30m` in milliseconds; anything else is a usage error that shows the forms. */
export function parseAge(text: string): number {
  const m = AGE.exec(text.trim());
  if (!m)
    throw new UsageError(
      `--older-than ${JSON.stringify(text)} is not an age: give a whole number and a unit, d (days), h (hours) or ` +
        'm (minutes), e.g. 7d, 12h, 30m',
    );
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

export const DEFAULT_PRUNE_AGE = '30d';

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let n = bytes / 1024;
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return `${n.toFixed(1)} ${units[i]}`;
}

/**
 * `gatehouse runs prune [--older-than D] [--dry-run] [--all]`: removes finished runs whose last
 * event is older than D, says which old runs were kept and why, and the space freed.
 */
export function pruneCommand(o: {
  stateDir?: string;
  all?: boolean;
  olderThan: string;
  dryRun?: boolean;
  json?: boolean;
}): number {
  const olderThanMs = parseAge(o.olderThan);
  const reports: PruneReport[] = scopes(o).map((s) =>
    pruneRuns(s.dir, { olderThanMs, ...(o.dryRun ? { dryRun: true } : {}) }),
  );
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ dryRun: Boolean(o.dryRun), reports })}\n`);
    return 0;
  }
  const out = (l: string): void => void process.stdout.write(`${l}\n`);
  const verb = o.dryRun ? 'would remove' : 'removed';
  for (const r of reports) {
    for (const x of r.removed)
      out(
        `${verb} ${x.runId}  ${x.status}, last active ${x.lastAt}, ${size(x.bytes)}` +
          `${x.runs.length > 1 ? ` (with ${x.runs.length - 1} sub-agent run(s))` : ''}`,
      );
    for (const k of r.kept) out(`kept ${k.runId}: ${k.reason}`);
  }
  const removed = reports.reduce((n, r) => n + r.removed.length, 0);
  const bytes = reports.reduce((n, r) => n + r.bytes, 0);
  const newer = reports.reduce((n, r) => n + r.newer, 0);
  out(
    `${o.dryRun ? 'would free' : 'freed'} ${size(bytes)}: ${removed} run(s) ${verb} older than ${o.olderThan}; ` +
      `${reports.reduce((n, r) => n + r.kept.length, 0)} kept; ${newer} newer`,
  );
  return 0;
}
