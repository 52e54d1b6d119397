import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { LogKey } from '../../src/events/key';
import { parseJob, sealJob, type Job } from '../../src/queue/job';
import { jobArgs } from '../../src/queue/job-args';

/**
 * Red team (issue 16), a hostile queue publisher: anyone who can publish on the queue's subject
 * (NATS access) but does not hold the installation's log key. Before the fix a worker took any
 * job that fit the schema: a `start` under the id of a run queued by someone else (its submitter's
 * job then only continued the attacker's run, flags ignored), a `resume` naming another snapshot,
 * a run with a policy of the attacker's. Jobs are now sealed with the log key and checked first.
 */
const keyOf = () => LogKey.fromBytes(randomBytes(32), { keyFile: '/nonexistent/log.key', headsDir: os.tmpdir() });
const ours = keyOf();
const bytes = (text: string) => new TextEncoder().encode(text);

const start: Job = {
  v: 1,
  kind: 'start',
  runId: 'run_queuedbyalice1',
  task: 'fix the flaky test',
  snapshot: { name: 'run_queuedbyalice1.tar', sha256: 'a'.repeat(64), bytes: 10 },
  flags: { model: 'openai:gpt', policy: '{"mode":"sandboxed-auto"}' },
  submittedAt: '2026-11-24T21:00:00.000Z',
};
const resume: Job = {
  v: 1,
  kind: 'resume',
  runId: 'run_queuedbyalice1',
  snapshot: start.snapshot,
  submittedAt: '2026-11-24T21:05:00.000Z',
};

function tampered(job: Job, change: (j: Record<string, unknown>) => void): Uint8Array {
  const j = JSON.parse(sealJob(ours, job)) as Record<string, unknown>;
  change(j);
  return bytes(JSON.stringify(j));
}

describe('redteam16: jobs from a publisher without the log key', () => {
  it('a sealed job of this installation is taken', () => {
    expect(parseJob(bytes(sealJob(ours, start)), ours)).toEqual({ job: start });
    expect(parseJob(bytes(sealJob(ours, resume)), ours)).toEqual({ job: resume });
  });

  it('an unsealed start under a queued run id (a hijack of that run) is refused', () => {
    const forged = { ...start, task: 'exfiltrate', flags: { model: 'openai:gpt', policy: '{"allow":["*"]}' } };
    expect(parseJob(bytes(JSON.stringify(forged)), ours)).toEqual({
      problem: expect.stringMatching(/no MAC/) as unknown,
    });
  });

  it("a job sealed with another installation's key is refused", () => {
    expect(parseJob(bytes(sealJob(keyOf(), start)), ours)).toEqual({
      problem: expect.stringMatching(/does not verify/) as unknown,
    });
  });

  it.each([
    [
      "its snapshot pointed at another run's tar",
      (j: Record<string, unknown>) => {
        j.snapshot = { name: 'run_someoneelse.tar', sha256: 'b'.repeat(64), bytes: 99 };
      },
    ],
    [
      'its policy replaced',
      (j: Record<string, unknown>) => {
        j.flags = { ...(j.flags as object), policy: '{"allow":["*"]}' };
      },
    ],
    [
      'its mode changed',
      (j: Record<string, unknown>) => {
        j.flags = { ...(j.flags as object), mode: 'auto' };
      },
    ],
    [
      'its run id moved to another run',
      (j: Record<string, unknown>) => {
        j.runId = 'run_runningelsewhere';
      },
    ],
    [
      'its kind turned into a resume',
      (j: Record<string, unknown>) => {
        j.kind = 'resume';
        delete j.task;
        delete j.flags;
      },
    ],
    [
      'its MAC garbled',
      (j: Record<string, unknown>) => {
        j.mac = 'f'.repeat(64);
      },
    ],
  ])('a sealed job with %s is refused', (_what, change) => {
    expect(parseJob(tampered(start, change), ours)).toEqual({ problem: expect.stringMatching(/MAC/) as unknown });
  });

  it('garbage, arrays and oversize fields are refused before any MAC is computed', () => {
    expect(parseJob(bytes('[1,2]'), ours)).toHaveProperty('problem');
    expect(parseJob(bytes('null'), ours)).toHaveProperty('problem');
    const huge = { ...start, task: 'x'.repeat(64 * 1024 + 1) };
    expect(parseJob(bytes(sealJob(ours, huge)), ours)).toEqual({ problem: expect.stringMatching(/task/) as unknown });
  });
});

describe('redteam16: a second (sealed) job for a run that already has events', () => {
  it("continues it as recorded: none of the job's flags (policy, mode, image, budgets) reach resume", async () => {
    const filesDir = mkdtempSync(`${os.tmpdir()}/gh-rt16-files-`);
    const loose: Job = {
      ...start,
      task: 'ignore the old task',
      flags: {
        model: 'openai:other',
        policy: '{"allow":["*"]}',
        config: '{}',
        mode: 'auto',
        image: 'evil:latest',
        check: 'curl x',
        maxCost: 1000,
        maxTurns: 999,
        approvalWait: 0,
      },
    };
    const place = { repoDir: '/w/run/repo', filesDir, stateDir: '/s', store: 'nats://127.0.0.1:4222' };
    for (const job of [loose, resume]) {
      const args = await jobArgs(job, place, true);
      expect(args).toEqual([
        'resume',
        '--repo=/w/run/repo',
        '--json',
        '--state-dir=/s',
        '--store=nats://127.0.0.1:4222',
        '--',
        'run_queuedbyalice1',
      ]);
    }
    expect(readdirSync(filesDir)).toEqual([]);
  });
});
