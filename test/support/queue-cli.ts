import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The real CLI driving the run queue: submit, workers as processes, status and the store's log. */
const root = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = path.join(root, 'orchestrator/bin/gatehouse.mjs');

export type Event = { type: string; data: Record<string, unknown>; runId: string; seq: number };

/** A key shared by every process of one test: one installation, so one queue and one store. */
export function installationEnv(): NodeJS.ProcessEnv {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-inst-'));
  return { GATEHOUSE_KEY_FILE: path.join(dir, 'log.key'), CI: 'true' };
}

export function gatehouse(args: string[], env: NodeJS.ProcessEnv, timeout = 120_000) {
  return spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    timeout,
    env: { ...process.env, ...env },
    input: '',
  });
}

export function repoWith(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-queue-repo-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  spawnSync('git', ['init', '-q'], { cwd: dir });
  spawnSync('git', ['add', '-A'], { cwd: dir });
  spawnSync('git', ['-c', 'user.email=t@gatehouse', '-c', 'user.name=t', 'commit', '-qm', 'fixture'], { cwd: dir });
  return dir;
}

export function scriptFile(script: unknown): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-queue-script-')), 'script.json');
  writeFileSync(file, JSON.stringify(script));
  return file;
}

export function policyFile(policy: unknown = { mode: 'sandboxed-auto' }): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-queue-pol-')), 'policy.json');
  writeFileSync(file, JSON.stringify(policy));
  return file;
}

export interface WorkerProcess {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** A `gatehouse worker` process: its own state directory unless given one, the shared installation and store. */
export function startWorkerProcess(
  store: string,
  env: NodeJS.ProcessEnv,
  extra: string[] = [],
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-worker-state-')),
): WorkerProcess {
  const child = spawn(
    process.execPath,
    [CLI, 'worker', '--store', store, '--state-dir', stateDir, '--concurrency', '1', ...extra],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } },
  );
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err = (err + b.toString('utf8')).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stderr: () => err, exited };
}

/** The run's events as the store holds them (`gatehouse export`). */
export function storeEvents(store: string, runId: string, env: NodeJS.ProcessEnv): Event[] {
  const r = gatehouse(['export', runId, '--store', store], env);
  if (r.status !== 0) return [];
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);
}

/** Waits (bounded) until `check` is true, polling every `everyMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms: number, everyMs = 300): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return false;
}
