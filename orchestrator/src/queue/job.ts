import { canonicalJson } from '@gatehouse/shared';
import { z } from 'zod';
import type { LogKey } from '../events/key';

const RUN_ID = /^run_[a-z0-9]{6,64}$/;

/** What `gatehouse submit` may pass on to the run a worker starts: the run's own flags, nothing of the worker's. */
export const JobFlags = z
  .object({
    model: z.string().min(1).max(512),
    /** The scripted model's turns (a `scripted:` model reads a file the worker does not have). */
    script: z
      .string()
      .max(4 * 1024 * 1024)
      .optional(),
    mode: z.string().max(64).optional(),
    /** Trusted files' contents (the submitter's --policy and --config), written beside the run on the worker. */
    policy: z
      .string()
      .max(1024 * 1024)
      .optional(),
    config: z
      .string()
      .max(1024 * 1024)
      .optional(),
    image: z.string().max(512).optional(),
    check: z.string().max(4096).optional(),
    maxTurns: z.number().int().positive().optional(),
    maxToolCalls: z.number().int().positive().optional(),
    maxTokens: z.number().int().positive().optional(),
    maxCost: z.number().positive().optional(),
    maxWall: z.number().int().positive().optional(),
    approvalWait: z.number().int().nonnegative().optional(),
  })
  .strict();
export type JobFlags = z.infer<typeof JobFlags>;

/** The repository as submitted: a tar in the object store, checked by hash on the worker. */
export const Snapshot = z
  .object({ name: z.string().min(1).max(256), sha256: z.string().regex(/^[0-9a-f]{64}$/), bytes: z.number().int() })
  .strict();
export type Snapshot = z.infer<typeof Snapshot>;

/**
 * One message on the run queue. `start` begins the run with this id (a redelivered start whose run
 * already has events continues it instead); `resume` continues a paused or stopped run.
 */
export const Job = z.discriminatedUnion('kind', [
  z
    .object({
      v: z.literal(1),
      kind: z.literal('start'),
      runId: z.string().regex(RUN_ID),
      task: z
        .string()
        .min(1)
        .max(64 * 1024),
      snapshot: Snapshot,
      flags: JobFlags,
      submittedAt: z.string().datetime(),
    })
    .strict(),
  z
    .object({
      v: z.literal(1),
      kind: z.literal('resume'),
      runId: z.string().regex(RUN_ID),
      snapshot: Snapshot,
      submittedAt: z.string().datetime(),
    })
    .strict(),
]);
export type Job = z.infer<typeof Job>;

/** What a job's MAC covers: its canonical JSON, under a label no run head or event shares. */
const sealed = (job: Job): string => `gatehouse-queue-job\n${canonicalJson(job)}`;

/**
 * A job as it goes on the queue: its JSON with a MAC under the installation's log key. Anyone who
 * can publish on the queue's subject but lacks the key (a NATS user of another team, a leaked
 * credential) cannot make a job a worker takes: not a run under a queued run's id, not a resume
 * over another snapshot, not a run with a policy of their own.
 */
export function sealJob(key: LogKey, job: Job): string {
  return JSON.stringify({ ...job, mac: key.macHead(sealed(job)) });
}

/** A job read off the queue, or why it is not one (the message is then terminated, never retried). */
export function parseJob(data: Uint8Array, key: LogKey): { job: Job } | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch (e) {
    return { problem: `not a JSON job: ${(e as Error).message.slice(0, 200)}` };
  }
  // The MAC rides beside the job's fields; the job is checked without it, then the MAC over it.
  let mac: unknown;
  if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
    const { mac: m, ...body } = json as Record<string, unknown>;
    mac = m;
    json = body;
  }
  const parsed = Job.safeParse(json);
  if (!parsed.success)
    return {
      problem: parsed.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
        .join('; '),
    };
  if (typeof mac !== 'string' || !key.checkHeadMac(sealed(parsed.data), mac))
    return {
      problem:
        mac === undefined
          ? "it carries no MAC: it was not submitted with this installation's key"
          : "its MAC does not verify with this installation's key (forged, altered, or another installation's)",
    };
  return { job: parsed.data };
}
