/**
 * The JetStream names one installation's queue uses. An installation is every worker and submitter
 * holding the same log key (GATEHOUSE_KEY_FILE): its key id keeps two installations sharing a NATS
 * cluster apart, and is no secret (it is in every event's MAC).
 */
export interface QueueNames {
  /** The work-queue stream: one message per run to start or continue. */
  stream: string;
  subject: string;
  /** The durable pull consumer every worker takes from. */
  consumer: string;
  /** Key-value: run id -> the worker holding the run, renewed while it runs, gone when it stops renewing. */
  leases: string;
  /** Key-value: worker id -> what it is doing, renewed while it lives. */
  workers: string;
  /** Key-value: run id -> where the run is (queued, running, paused, done), for `gatehouse status`. */
  runs: string;
  /** Object store: repository snapshots, one per submitted run. */
  snapshots: string;
}

export function queueNames(installation: string): QueueNames {
  if (!/^[0-9a-f]{16}$/.test(installation)) throw new Error(`not an installation id: ${JSON.stringify(installation)}`);
  return {
    stream: `GATEHOUSE_QUEUE_${installation}`,
    subject: `gatehouse.queue.${installation}`,
    consumer: 'workers',
    leases: `gatehouse_leases_${installation}`,
    workers: `gatehouse_workers_${installation}`,
    runs: `gatehouse_runs_${installation}`,
    snapshots: `gatehouse_snapshots_${installation}`,
  };
}
