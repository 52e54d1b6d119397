import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { JsMsg } from 'nats';
import { LogKey } from '../events/key';
import { runDir } from '../events/paths';
import { RunLog } from '../events/store';
import { jobArgs } from './job-args';
import { parseJob, type Job } from './job';
import { Lease, type LeaseHolder } from './lease';
import type { QueueHandles } from './queue-setup';
import { startRunChild, type ChildOutcome } from './run-child';
import { updateRunRecord } from './run-record';
import { extractSnapshot } from './snapshot';

export interface JobContext {
  queue: QueueHandles;
  holder: LeaseHolder;
  leaseTtlMs: number;
  /** The `gatehouse` CLI file the children run. */
  cli: string;
  store: string;
  stateDir: string;
  /** Where snapshots are extracted: the same on every worker, so a run's repository path is too. */
  workRoot: string;
  env: NodeJS.ProcessEnv;
  /** Whether the event store already holds events of this run (then it is continued, never started again). */
  hasEvents: (runId: string) => Promise<boolean>;
  /** Called with each run child, so a stopping worker can end them. */
  track: (runId: string, stop: () => void) => () => void;
  /** True once the worker is stopping: a run it killed goes back on the queue for another worker, unjudged. */
  stopping: () => boolean;
  log: (line: string) => void;
}

/** After this many deliveries without the run getting going, the job is given up (it would fail forever). */
const MAX_ATTEMPTS = 3;

/**
 * One message off the queue, start to end:
 *   1. parse it (not a job: terminated, never retried);
 *   2. take the run's lease (held by a live worker: handed back to come round again later);
 *   3. keep the lease and the message alive while the run goes on;
 *   4. extract the repository snapshot (once per machine);
 *   5. run the child: `run` if the store has no events of the run, else `resume` (takeover);
 *   6. settle: completed or paused runs are acknowledged; a lost lease leaves the message alone
 *      (the new holder has it); a child that never got going is retried a few times, then failed.
 */
export async function handleJob(msg: JsMsg, c: JobContext): Promise<void> {
  // 1. Parse.
  // The key the worker's runs verify their logs with (they inherit its environment): jobs are sealed with it.
  const parsed = parseJob(msg.data, LogKey.load({ env: c.env }));
  if ('problem' in parsed) {
    c.log(`queue message ${msg.seq} is not a job (${parsed.problem}); it is dropped`);
    msg.term();
    return;
  }
  const job = parsed.job;
  // 2. Lease.
  const lease = await Lease.acquire(c.queue.leases, job.runId, c.holder);
  if (!(lease instanceof Lease)) {
    msg.nak(Math.max(1000, Math.floor(c.leaseTtlMs / 2)));
    return;
  }
  // 3. Keep alive.
  let lostWhy: string | undefined;
  let kill: (() => void) | undefined;
  lease.hold(Math.floor(c.leaseTtlMs / 3), c.leaseTtlMs, (why) => {
    lostWhy = why;
    c.log(`lost the lease on ${job.runId} (${why}); its run is stopped here`);
    kill?.();
  });
  const working = setInterval(() => msg.working(), Math.floor(c.leaseTtlMs / 3));
  try {
    await updateRunRecord(c.queue.runs, job.runId, {
      state: 'running',
      worker: c.holder.worker,
      attempts: msg.info.redeliveryCount,
    });
    // 4. Snapshot.
    const place = await placeFor(c, job);
    // 5. Run.
    const continuing = await c.hasEvents(job.runId);
    // Continued: the store's log is pulled fresh. Started again (an attempt that never reached the
    // store): `run --run-id` must not find the first attempt's copy (it would refuse the id).
    await setAsideLocalCopy(c.stateDir, job.runId);
    const args = await jobArgs(job, place, continuing);
    c.log(`${continuing ? 'continuing' : 'starting'} ${job.runId}`);
    // Silent for half the lease TTL: the child is dead before the lease (renewed every third) can pass on.
    const running = startRunChild(c.cli, args, c.env, Math.floor(c.leaseTtlMs / 2));
    kill = () => running.child.kill('SIGKILL');
    if (lostWhy) kill();
    const untrack = c.track(job.runId, kill);
    const outcome = await running.done.finally(untrack);
    // 6. Settle, only while the run is still ours: a worker woken from a stop (SIGSTOP, a frozen VM)
    // sees its child's end before its lease timer runs, and must not write over the new holder's run.
    if (!lostWhy && (await lease.renew()) !== 'renewed') lostWhy = 'its lease was not renewed after the run ended';
    if (lostWhy) return;
    if (c.stopping()) return void msg.nak();
    await settle(msg, job, outcome, c);
  } catch (e) {
    c.log(`${job.runId}: ${(e as Error).message}`);
    if (lostWhy) return;
    await giveUpOrRetry(msg, job, (e as Error).message, c);
  } finally {
    clearInterval(working);
    await lease.release();
  }
}

async function placeFor(c: JobContext, job: Job) {
  const runRoot = path.join(c.workRoot, job.runId);
  const repoDir = path.join(runRoot, 'repo');
  const marker = path.join(runRoot, 'snapshot.sha256');
  const have = existsSync(marker) ? (await fs.readFile(marker, 'utf8')).trim() : undefined;
  if (have !== job.snapshot.sha256) {
    await fs.rm(repoDir, { recursive: true, force: true });
    await extractSnapshot(c.queue.snapshots, job.snapshot, repoDir);
    await fs.writeFile(marker, `${job.snapshot.sha256}\n`);
  }
  return { repoDir, filesDir: path.join(runRoot, 'files'), stateDir: c.stateDir, store: c.store };
}

async function settle(msg: JsMsg, job: Job, outcome: ChildOutcome, c: JobContext): Promise<void> {
  // A run that had already ended (its worker died between the end and the acknowledgement) is
  // refused by resume and prints nothing: its end is in the copy resume pulled from the store.
  const last = outcome.last ?? lastLocalEvent(c.stateDir, job.runId);
  if (last?.type === 'run.completed') {
    const status = String(last.data.status);
    await updateRunRecord(c.queue.runs, job.runId, {
      state: 'completed',
      status,
      reason: typeof last.data.stopReason === 'string' ? last.data.stopReason : '',
    });
    msg.ack();
    c.log(`${job.runId} completed: ${status}`);
    return;
  }
  if (last?.type === 'run.paused') {
    const pending = Array.isArray(last.data.pending) ? last.data.pending.map(String) : [];
    await updateRunRecord(c.queue.runs, job.runId, { state: 'paused', pending });
    msg.ack();
    c.log(`${job.runId} paused for ${pending.join(', ') || 'a decision'}: answer it, then gatehouse submit --resume`);
    return;
  }
  const exit = outcome.signal ?? String(outcome.code);
  const why = `the run exited ${exit} without completing: ${outcome.stderrTail.trim().slice(-800)}`;
  await giveUpOrRetry(msg, job, why, c);
}

/**
 * Before a run is started or continued here, a local copy of it (left by an earlier attempt, or by a
 * run child of this machine that died with its worker) is moved out of the way: it may hold events
 * appended after its last flush, which the store never took. Nothing in it is lost to the record:
 * no side effect happened after the last flush without the store holding its intent.
 */
async function setAsideLocalCopy(stateDir: string, runId: string): Promise<void> {
  const dir = runDir(stateDir, runId);
  if (!existsSync(dir)) return;
  const aside = path.join(stateDir, 'set-aside', `${runId}-${Date.now()}`);
  await fs.mkdir(path.dirname(aside), { recursive: true });
  await fs.rename(dir, aside);
}

function lastLocalEvent(stateDir: string, runId: string): ChildOutcome['last'] {
  try {
    const e = RunLog.readEvents(stateDir, runId).at(-1);
    return e?.type === 'run.completed' ? { type: e.type, data: e.data } : undefined;
  } catch {
    return undefined;
  }
}

async function giveUpOrRetry(msg: JsMsg, job: Job, why: string, c: JobContext): Promise<void> {
  if (msg.info.redeliveryCount >= MAX_ATTEMPTS) {
    await updateRunRecord(c.queue.runs, job.runId, { state: 'failed', reason: why.slice(0, 2000) });
    msg.term();
    c.log(`${job.runId} given up after ${msg.info.redeliveryCount} attempts: ${why}`);
    return;
  }
  await updateRunRecord(c.queue.runs, job.runId, { state: 'queued', reason: why.slice(0, 2000) });
  msg.nak(2000);
}
