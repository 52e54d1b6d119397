import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { realRepoPath } from '../events/state-home';
import type { JobFlags } from '../queue/job';
import { openQueue } from '../queue/open-queue';
import { chosenStore } from '../store/index';
import { runHasEvents } from '../queue/run-events';
import { queueStatus, statusLines } from '../queue/status';
import { submitResume, submitRun } from '../queue/submit';
import { startWorker } from '../queue/worker';
import { parseCount, parseDuration, parseMode, parseRepo, parseUsd } from './option-parsers';
import { UsageError } from './usage';
import { dockerHostOption } from './docker-host-option';
import { registerQueuePrune } from './queue-prune-command';
import { startWorkerPool } from './worker-pool';

/** `--store nats://…`, else GATEHOUSE_STORE: the queue lives beside the event store. */
export function storeUrl(flag: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env) {
  const url = chosenStore(flag, env);
  if (!url)
    throw new UsageError('the run queue needs a NATS store: pass --store nats://HOST:PORT or set GATEHOUSE_STORE');
  return url;
}

function readTrusted(file: string | undefined, what: string): string | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read the ${what} ${file}: ${(e as Error).message}`);
  }
}

interface SubmitFlags {
  repo: string;
  model?: string;
  mode?: string;
  policy?: string;
  config?: string;
  image?: string;
  check?: string;
  maxTurns?: number;
  maxToolCalls?: number;
  maxTokens?: number;
  maxCost?: number;
  maxWall?: number;
  resume?: string;
  store?: string;
  json?: boolean;
}

async function submitCommand(task: string | undefined, o: SubmitFlags): Promise<number> {
  const url = storeUrl(o.store);
  if (o.resume && task) throw new UsageError('submit takes a task or --resume RUN, not both');
  if (!o.resume && !task) throw new UsageError('submit needs a task (or --resume RUN for a paused run)');
  if (!o.resume && !o.model) throw new UsageError("submit needs --model (the model the worker's run uses)");
  const { nc, queue } = await openQueue(url, { name: 'gatehouse submit' });
  try {
    if (o.resume) {
      await submitResume(nc, queue, o.resume);
      process.stdout.write(o.json ? `${JSON.stringify({ runId: o.resume, kind: 'resume' })}\n` : `${o.resume}\n`);
      return 0;
    }
    const model = o.model!;
    const flags: JobFlags = {
      model,
      ...(model.startsWith('scripted:')
        ? { script: readTrusted(model.slice('scripted:'.length), 'model script') }
        : {}),
      ...(o.mode ? { mode: o.mode } : {}),
      ...(o.policy ? { policy: readTrusted(o.policy, 'policy file') } : {}),
      ...(o.config ? { config: readTrusted(o.config, 'config file') } : {}),
      ...(o.image ? { image: o.image } : {}),
      ...(o.check ? { check: o.check } : {}),
      ...(o.maxTurns ? { maxTurns: o.maxTurns } : {}),
      ...(o.maxToolCalls ? { maxToolCalls: o.maxToolCalls } : {}),
      ...(o.maxTokens ? { maxTokens: o.maxTokens } : {}),
      ...(o.maxCost ? { maxCost: o.maxCost } : {}),
      ...(o.maxWall ? { maxWall: o.maxWall } : {}),
    };
    const { runId } = await submitRun(nc, queue, { task: task!, repoDir: realRepoPath(o.repo), flags });
    process.stdout.write(o.json ? `${JSON.stringify({ runId, kind: 'start' })}\n` : `${runId}\n`);
    return 0;
  } finally {
    await nc.close();
  }
}

interface WorkerFlags {
  store?: string;
  dockerHost?: string;
  concurrency: number;
  stateDir?: string;
  leaseTtl?: number;
  exitWhenIdle?: number;
  warmPool?: number;
}

async function workerCommand(o: WorkerFlags): Promise<number> {
  const url = storeUrl(o.store);
  const leaseTtlMs = o.leaseTtl ?? 15_000;
  const { nc, queue, installation } = await openQueue(url, { name: 'gatehouse worker', leaseTtlMs });
  const log = (line: string): void => void process.stderr.write(`gatehouse worker: ${line}\n`);
  const stateDir = o.stateDir ?? path.join(os.homedir(), '.local/state/gatehouse/worker');
  // Its children claim from it: the pool's socket rides in their environment (inherited).
  const pool = o.warmPool ? await startWorkerPool(o.warmPool, path.resolve(stateDir), log, o.dockerHost) : undefined;
  if (pool) Object.assign(process.env, pool.env);
  const worker = startWorker({
    nc,
    queue,
    store: url.url,
    cli: process.argv[1]!,
    stateDir,
    // The same path on every worker: a run taken over finds its repository where it was.
    workRoot: path.join(os.tmpdir(), 'gatehouse-queue', installation),
    concurrency: o.concurrency,
    leaseTtlMs,
    ...(o.dockerHost ? { dockerHost: o.dockerHost } : {}),
    ...(o.exitWhenIdle ? { exitWhenIdleMs: o.exitWhenIdle } : {}),
    hasEvents: (runId) => runHasEvents(nc, installation, runId),
    log,
  });
  log(`${worker.id} taking runs (at most ${o.concurrency} at a time) from ${url.url}`);
  const stop = (): void => void worker.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await worker.done;
  await pool?.close();
  await nc.close();
  return 0;
}

async function statusCommand(o: { store?: string; json?: boolean }): Promise<number> {
  const { nc, queue } = await openQueue(storeUrl(o.store), { name: 'gatehouse status' });
  try {
    const s = await queueStatus(nc, queue);
    process.stdout.write(o.json ? `${JSON.stringify(s)}\n` : `${statusLines(s).join('\n')}\n`);
    return 0;
  } finally {
    await nc.close();
  }
}

const STORE_HELP = 'the JetStream store holding the queue and the runs, nats://HOST:PORT (default $GATEHOUSE_STORE)';

/** `submit`, `worker`, `status`: the run queue (docs/scaling.md). */
export function registerQueueCommands(program: Command): void {
  program
    .command('submit')
    .description("queue a run for a worker: the repository's snapshot goes with it (or --resume RUN)")
    .argument('[task]', 'what the agent should do')
    .option('--repo <dir>', 'repository to work on (snapshotted now, uncommitted changes included)', parseRepo, '.')
    .option('--model <spec>', 'the model the run uses (the worker holds its API key)')
    .option('--mode <mode>', 'approval mode', parseMode)
    .option('--policy <file>', 'policy file, sent with the run')
    .option('--config <file>', 'project config, sent with the run')
    .option('--image <image>', 'sandbox image')
    .option('--check <command>', 'the command that decides success')
    .option('--max-turns <n>', 'stop after this many model turns', parseCount)
    .option('--max-tool-calls <n>', 'stop after this many tool calls', parseCount)
    .option('--max-tokens <n>', 'stop after this many tokens', parseCount)
    .option('--max-cost <usd>', 'stop once the run cost this many US dollars', parseUsd)
    .option('--max-wall <duration>', 'stop after this long running: 90s, 30m, 2h', parseDuration)
    .option('--resume <run>', 'queue a paused run again, once its approvals are answered')
    .option('--store <url>', STORE_HELP)
    .option('--json', 'print {"runId"} as JSON')
    .action(async (task: string | undefined, o: SubmitFlags) => {
      process.exitCode = await submitCommand(task, o);
    });
  dockerHostOption(
    program
      .command('worker')
      .description(
        'take runs off the queue and run them, each under a lease another worker takes over if this one dies',
      ),
  )
    .option('--store <url>', STORE_HELP)
    .option('--concurrency <n>', 'runs at a time', parseCount, 2)
    .option('--state-dir <dir>', "the worker's local copy of its runs' logs")
    .option('--lease-ttl <duration>', 'how long a run stays held without renewal (default 15s)', parseDuration)
    .option('--exit-when-idle <duration>', 'stop after this long with nothing to do', parseDuration)
    .option('--warm-pool <n>', 'keep n sandboxes started for its runs to claim (docs/warm-pool.md)', parseCount)
    .action(async (o: WorkerFlags) => {
      process.exitCode = await workerCommand(o);
    });
  program
    .command('status')
    .description("the queue's workers, leases and runs")
    .option('--store <url>', STORE_HELP)
    .option('--json', 'print the status as JSON')
    .action(async (o: { store?: string; json?: boolean }) => {
      process.exitCode = await statusCommand(o);
    });
  registerQueuePrune(program, STORE_HELP, (flag) => storeUrl(flag));
}
