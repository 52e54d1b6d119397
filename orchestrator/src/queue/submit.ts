import { headers, type NatsConnection } from 'nats';
import { newId } from '@gatehouse/shared';
import { GatehouseError } from '../errors';
import { sealJob, type Job, type JobFlags } from './job';
import type { QueueHandles } from './queue-setup';
import { readRunRecord, updateRunRecord } from './run-record';
import { putSnapshot } from './snapshot';

/** What `gatehouse submit` was asked that cannot be done: nothing was queued. */
export class SubmitError extends GatehouseError {
  readonly kind = 'refused';
}

/**
 * Queues a new run: its repository's snapshot first (so no job ever names a missing snapshot),
 * then the job, with the run id as its message id (a retried submit is one job), then its record.
 */
export async function submitRun(
  nc: NatsConnection,
  q: QueueHandles,
  args: { task: string; repoDir: string; flags: JobFlags },
): Promise<{ runId: string; job: Job }> {
  const runId = newId('run');
  const snapshot = await putSnapshot(q.snapshots, runId, args.repoDir);
  const job: Job = {
    v: 1,
    kind: 'start',
    runId,
    task: args.task,
    snapshot,
    flags: args.flags,
    submittedAt: new Date().toISOString(),
  };
  await updateRunRecord(
    q.runs,
    runId,
    {},
    {
      runId,
      state: 'queued',
      task: args.task.slice(0, 500),
      snapshot,
      attempts: 0,
      submittedAt: job.submittedAt,
    },
  );
  try {
    await publishJob(nc, q, job, runId);
  } catch (e) {
    // Not queued: the record says so and the snapshot goes, so neither waits for a job that never comes.
    await updateRunRecord(q.runs, runId, { state: 'failed', reason: `not queued: ${(e as Error).message}` });
    await q.snapshots.delete(snapshot.name).catch(() => undefined);
    throw e;
  }
  return { runId, job };
}

/**
 * Queues a paused or stopped run to be continued by a worker (after its approvals were answered).
 * The run must have been submitted through this queue: its snapshot is the repository it resumes on.
 */
export async function submitResume(nc: NatsConnection, q: QueueHandles, runId: string): Promise<Job> {
  const read = await readRunRecord(q.runs, runId);
  if (read && 'unverified' in read)
    throw new SubmitError(
      `the record of run ${runId} in ${q.names.runs} is not trusted: ${read.unverified}; ` +
        'nothing was queued. Check who can write to the NATS server; ' +
        'the run can be resumed where it ran with gatehouse resume',
    );
  const record = read?.record;
  if (!record?.snapshot)
    throw new SubmitError(
      `run ${runId} was not submitted through this queue (no record of it in ${q.names.runs}); ` +
        'resume it where it ran with gatehouse resume',
    );
  if (record.state === 'running' || record.state === 'queued')
    throw new SubmitError(`run ${runId} is ${record.state} already; gatehouse status shows where`);
  const job: Job = { v: 1, kind: 'resume', runId, snapshot: record.snapshot, submittedAt: new Date().toISOString() };
  await updateRunRecord(q.runs, runId, { state: 'queued' });
  try {
    await publishJob(nc, q, job, `${runId}:resume:${job.submittedAt}`);
  } catch (e) {
    await updateRunRecord(q.runs, runId, { state: record.state });
    throw e;
  }
  return job;
}

async function publishJob(nc: NatsConnection, q: QueueHandles, job: Job, msgId: string): Promise<void> {
  const h = headers();
  h.set('Nats-Msg-Id', msgId);
  // Sealed with the key the queue's name comes from (openQueue): the workers of this installation hold it.
  try {
    await nc.jetstream().publish(q.names.subject, sealJob(q.runs.key, job), { headers: h });
  } catch (e) {
    // nats.js puts the server's reason (`maximum messages exceeded`) in chainedError; its message is the code.
    const err = e as Error & { chainedError?: Error };
    const m = [err.message, err.chainedError?.message].filter(Boolean).join(': ');
    if (/maximum (messages|bytes) exceeded|resource limits exceeded/i.test(m))
      throw new SubmitError(
        `the queue ${q.names.stream} is full (${m}): nothing was queued. Start workers to take the waiting ` +
          'runs (gatehouse status shows them), then submit again',
      );
    if (/message size exceeds|maximum payload/i.test(m))
      throw new SubmitError(
        `the job for ${job.runId} is too big for the queue (${m}): nothing was queued. ` +
          'Submit a smaller policy, config or model script',
      );
    throw new SubmitError(`queueing ${job.runId} on ${q.names.stream} failed (${m}): nothing was queued`);
  }
}
