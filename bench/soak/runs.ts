import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gatehouse } from './cli';
import { parseEvents, type RunEvidence, type SoakEvent } from './figures';

/** Submitting the soak's runs and reading them back: the queue's status and the store's logs. */
export interface Installation {
  store: string;
  /** GATEHOUSE_KEY_FILE and CI, shared by every process: one installation, one queue, one store. */
  env: NodeJS.ProcessEnv;
}

export function newInstallation(store: string): Installation {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-soak-inst-'));
  return { store, env: { GATEHOUSE_KEY_FILE: path.join(dir, 'log.key'), CI: 'true' } };
}

/** A scripted run: a file write, a command that takes a while (a window for the chaos), an answer. */
export function soakScript(sleepSeconds: number): unknown {
  return {
    turns: [
      { toolCalls: [{ name: 'write_file', input: { path: 'soak.txt', content: 'soak\n' } }] },
      { toolCalls: [{ name: 'bash', input: { command: `sleep ${sleepSeconds}; wc -c soak.txt > size.txt` } }] },
      { final: 'Wrote soak.txt and size.txt (obs-2).' },
    ],
  };
}

function fixture(script: unknown): { repo: string; script: string; policy: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-soak-run-'));
  const repo = path.join(dir, 'repo');
  spawnSync('mkdir', ['-p', repo]);
  writeFileSync(path.join(repo, 'README.md'), '# soak\n');
  const git = (...args: string[]) => spawnSync('git', args, { cwd: repo, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.email=soak@gatehouse', '-c', 'user.name=soak', 'commit', '-qm', 'fixture');
  writeFileSync(path.join(dir, 'script.json'), JSON.stringify(script));
  writeFileSync(path.join(dir, 'policy.json'), JSON.stringify({ mode: 'sandboxed-auto' }));
  return { repo, script: path.join(dir, 'script.json'), policy: path.join(dir, 'policy.json') };
}

/** Submit attempts that failed and were tried again (a cluster still electing, a node down), for the report. */
export const submitRetries: string[] = [];

/**
 * Submits one run. A submit that fails before the run is queued (storing the snapshot timed out on a
 * cluster still electing its leaders) is tried again, at most 3 times; each failure is recorded.
 */
export async function submit(inst: Installation, script: unknown): Promise<string> {
  const f = fixture(script);
  const args = ['submit', 'soak run', '--repo', f.repo, '--model', `scripted:${f.script}`, '--policy', f.policy];
  let last = '';
  for (let attempt = 1; attempt <= 3; attempt++) {
    const r = await gatehouse([...args, '--store', inst.store, '--json'], inst.env);
    if (r.code === 0) return (JSON.parse(r.stdout) as { runId: string }).runId;
    last = `exit ${r.code}: ${r.stderr.trim().slice(-500)}`;
    submitRetries.push(`${new Date().toISOString()} ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }
  throw new Error(`gatehouse submit failed 3 times (${last})`);
}

export interface RunState {
  runId: string;
  state: string;
  status?: string;
  reason?: string;
  worker?: string;
}

/** The queue's view of every run (`gatehouse status --json`); undefined while the store does not answer. */
export async function queueRuns(inst: Installation): Promise<RunState[] | undefined> {
  const r = await gatehouse(['status', '--store', inst.store, '--json'], inst.env, 60_000);
  if (r.code !== 0) return undefined;
  try {
    return (JSON.parse(r.stdout) as { runs: RunState[] }).runs;
  } catch {
    return undefined;
  }
}

const ENDED = new Set(['completed', 'failed', 'rejected']);

/** Waits (bounded) until every run has ended in the queue; returns the last view seen of them. */
export async function waitForRuns(
  inst: Installation,
  runIds: string[],
  deadlineMs: number,
  stopEarly: () => boolean = () => false,
): Promise<Map<string, RunState>> {
  const seen = new Map<string, RunState>();
  while (Date.now() < deadlineMs && !stopEarly()) {
    const runs = await queueRuns(inst);
    for (const r of runs ?? []) if (runIds.includes(r.runId)) seen.set(r.runId, r);
    if (runIds.every((id) => ENDED.has(seen.get(id)?.state ?? ''))) break;
    await new Promise((r) => setTimeout(r, 2000));
  }
  return seen;
}

export async function storeLog(inst: Installation, runId: string): Promise<{ events: SoakEvent[]; verified: boolean }> {
  // 30 s each: a read that hangs (see docs/scaling.md) costs the figures step a bounded time.
  const exported = await gatehouse(['export', runId, '--store', inst.store], inst.env, 30_000);
  const events = exported.code === 0 ? parseEvents(exported.stdout) : [];
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-soak-verify-'));
  const verify = await gatehouse(['verify', runId, '--store', inst.store, '--state-dir', stateDir], inst.env, 30_000);
  return { events, verified: exported.code === 0 && verify.code === 0 };
}

/** A worker state directory's copy of a run, if it has one (runs/<id>/events.jsonl). */
export function localCopy(stateDir: string, runId: string): SoakEvent[] | undefined {
  const file = path.join(stateDir, 'runs', runId, 'events.jsonl');
  return existsSync(file) ? parseEvents(readFileSync(file, 'utf8')) : undefined;
}

export async function evidence(
  inst: Installation,
  runId: string,
  stateDirs: string[],
  state: RunState | undefined,
): Promise<RunEvidence> {
  const { events, verified } = await storeLog(inst, runId);
  const locals = stateDirs.map((d) => localCopy(d, runId)).filter((l): l is SoakEvent[] => l !== undefined);
  return { runId, store: events, verified, locals, completedPerQueue: state?.state === 'completed' };
}
