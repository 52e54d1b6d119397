import { headers, type NatsConnection } from 'nats';
import { newId } from '@gatehouse/shared';
import { GatehouseError } from '../errors';
import { LogKey } from '../events/key';
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
  await publishJob(nc, q, job, runId);
  return { runId, job };
}

/**
 * Queues a paused or stopped run to be continued by a worker (after its approvals were answered).
 * The run must have been submitted through this queue: its snapshot is the repository it resumes on.
 */
export async function submitResume(nc: NatsConnection, q: QueueHandles, runId: string): Promise<Job> {
  const record = await readRunRecord(q.runs, runId);
  if (!record?.snapshot)
    throw new SubmitError(
      `run ${runId} was not submitted through this queue (no record of it in ${q.names.runs}); ` +
        'resume it where it ran with gatehouse resume',
    );
  if (record.state === 'running' || record.state === 'queued')
    throw new SubmitError(`run ${runId} is ${record.state} already; gatehouse status shows where`);
  const job: Job = { v: 1, kind: 'resume', runId, snapshot: record.snapshot, submittedAt: new Date().toISOString() };
  await updateRunRecord(q.runs, runId, { state: 'queued' });
  await publishJob(nc, q, job, `${runId}:resume:${job.submittedAt}`);
  return job;
}

async function publishJob(nc: NatsConnection, q: QueueHandles, job: Job, msgId: string): Promise<void> {
  const h = headers();
  h.set('Nats-Msg-Id', msgId);
  // Sealed with the key the queue's name comes from (openQueue): the workers of this installation hold it.
  await nc.jetstream().publish(q.names.subject, sealJob(LogKey.load({}), job), { headers: h });
}
