import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real CLI for the soak, asynchronously: the chaos loop and the samplers keep their timers
 * while a command runs (the tests' spawnSync helpers would stop them).
 */
// bench/soak/ in the source tree, bench/dist/ once bundled: the repository root two levels up either way.
const root = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = path.join(root, 'orchestrator/bin/gatehouse.mjs');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function gatehouse(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (stderr = (stderr + b.toString('utf8')).slice(-20_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The engine a worker drives: the main one (no DOCKER_HOST), or another over TLS. */
export interface Engine {
  name: string;
  dockerHost?: string;
  certPath?: string;
}

export interface SoakWorker {
  name: string;
  engine: Engine;
  stateDir: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr(): string;
}

/** The environment of a process driving `engine`: only its own Docker settings. */
export function engineEnv(base: NodeJS.ProcessEnv, engine: Engine): NodeJS.ProcessEnv {
  const env = { ...process.env, ...base };
  delete env.DOCKER_HOST;
  delete env.DOCKER_TLS_VERIFY;
  delete env.DOCKER_CERT_PATH;
  if (engine.dockerHost) env.DOCKER_HOST = engine.dockerHost;
  if (engine.certPath) Object.assign(env, { DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: engine.certPath });
  return env;
}

/** Every worker process still alive: ended by `killAllWorkers` when the soak itself is stopped. */
const live = new Set<SoakWorker>();
export function killAllWorkers(): void {
  for (const w of live) w.child.kill('SIGKILL');
}

export interface WorkerSpec {
  store: string;
  env: NodeJS.ProcessEnv;
  engine: Engine;
  concurrency: number;
  /** Sandboxes the worker keeps started (`--warm-pool`); 0: every run starts cold. */
  warmPool: number;
  leaseTtl: string;
  name: string;
}

/** A `gatehouse worker` process with its own state directory (kept: the figures read its local copies). */
export function startWorker(s: WorkerSpec): SoakWorker {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), `gh-soak-${s.name}-`));
  const args = [CLI, 'worker', '--store', s.store, '--state-dir', stateDir, '--concurrency', String(s.concurrency)];
  args.push('--lease-ttl', s.leaseTtl);
  if (s.warmPool > 0) args.push('--warm-pool', String(s.warmPool));
  if (s.engine.dockerHost) args.push('--docker-host', s.engine.dockerHost);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: engineEnv(s.env, s.engine) });
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err = (err + b.toString('utf8')).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const worker = { name: s.name, engine: s.engine, stateDir, child, exited, stderr: () => err };
  live.add(worker);
  void exited.then(() => live.delete(worker));
  return worker;
}

/** Stops a worker: SIGTERM (it hands its runs back), SIGKILL after 15 s. */
export async function stopWorker(w: SoakWorker): Promise<void> {
  if (w.child.exitCode !== null || w.child.signalCode !== null) return;
  w.child.kill('SIGTERM');
  const timer = setTimeout(() => w.child.kill('SIGKILL'), 15_000);
  await w.exited;
  clearTimeout(timer);
}
